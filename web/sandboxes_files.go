package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/gofiber/fiber/v2"
)

// SandboxFiles is what the file handlers call.
type SandboxFiles interface {
	ReadFile(ctx context.Context, actor bullpen.Member, id, path string) (io.ReadCloser, error)
	WriteFile(ctx context.Context, actor bullpen.Member, id, path string, src io.Reader, mode os.FileMode) error
	ListFiles(ctx context.Context, actor bullpen.Member, id, dir string) ([]sandbox.FileInfo, error)
	Stat(ctx context.Context, actor bullpen.Member, id, path string) (sandbox.FileInfo, error)
	Mkdir(ctx context.Context, actor bullpen.Member, id, path string, parents bool) error
	Remove(ctx context.Context, actor bullpen.Member, id, path string, recursive bool) error
	Rename(ctx context.Context, actor bullpen.Member, id, from, to string) error
}

// pathQuery returns the required ?path= (or another parameter).
func pathQuery(c *fiber.Ctx, name string) (string, error) {
	p := c.Query(name)
	if p == "" {
		return "", bullpen.Errorf(bullpen.EINVALID, "query parameter %s is required", name)
	}
	return p, nil
}

// readSandboxFile streams a file's raw bytes.
func (s *Server) readSandboxFile(c *fiber.Ctx) error {
	p, err := pathQuery(c, "path")
	if err != nil {
		return err
	}
	rc, err := s.sb.files.ReadFile(c.UserContext(), actor(c), c.Params("id"), p)
	if err != nil {
		return err
	}
	size := -1
	if st, ok := rc.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil {
			size = int(fi.Size())
		}
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEOctetStream)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(p)}))
	c.Context().SetBodyStream(rc, size) // closed by fasthttp once sent
	return nil
}

// writeSandboxFile streams the request body into a file: PUT
// …/files?path=&mode=0644. Bodies of any size work; the sandbox's disk is
// the limit.
func (s *Server) writeSandboxFile(c *fiber.Ctx) error {
	p, err := pathQuery(c, "path")
	if err != nil {
		return err
	}
	var mode os.FileMode
	if m := c.Query("mode"); m != "" {
		n, err := strconv.ParseUint(m, 8, 32)
		if err != nil || n > 0o777 {
			return bullpen.Errorf(bullpen.EINVALID, "mode must be octal permission bits, e.g. 0644")
		}
		mode = os.FileMode(n)
	}
	ctx, me, id := c.UserContext(), actor(c), c.Params("id")
	if err := s.sb.files.WriteFile(ctx, me, id, p, requestBody(c), mode); err != nil {
		return err
	}
	fi, err := s.sb.files.Stat(ctx, me, id, p)
	return reply(c, http.StatusCreated, fi, err)
}

// requestBody returns the body as a stream; each read pushes the
// connection's read deadline out, so a long upload is not cut off by the
// server's read timeout while data keeps coming.
func requestBody(c *fiber.Ctx) io.Reader {
	r := c.Context().RequestBodyStream()
	if r == nil {
		return bytes.NewReader(c.Body())
	}
	return &deadlineReader{r: r, c: c.Context().Conn()}
}

type deadlineReader struct {
	r io.Reader
	c interface{ SetReadDeadline(time.Time) error }
}

// Read implements io.Reader.
func (d *deadlineReader) Read(p []byte) (int, error) {
	if d.c != nil {
		_ = d.c.SetReadDeadline(time.Now().Add(time.Minute))
	}
	return d.r.Read(p)
}

func (s *Server) removeSandboxFile(c *fiber.Ctx) error {
	return keyedDo(c, pathName, func(ctx context.Context, me bullpen.Member, id string) error {
		p, err := pathQuery(c, "path")
		if err != nil {
			return err
		}
		return s.sb.files.Remove(ctx, me, id, p, c.QueryBool("recursive"))
	})
}

func (s *Server) listSandboxFiles(c *fiber.Ctx) error {
	return keyedList(c, pathName, func(ctx context.Context, me bullpen.Member, id string) ([]sandbox.FileInfo, error) {
		return s.sb.files.ListFiles(ctx, me, id, c.Query("path", "."))
	})
}

func (s *Server) statSandboxFile(c *fiber.Ctx) error {
	return keyed(c, pathName, func(ctx context.Context, me bullpen.Member, id string) (sandbox.FileInfo, error) {
		p, err := pathQuery(c, "path")
		if err != nil {
			return sandbox.FileInfo{}, err
		}
		return s.sb.files.Stat(ctx, me, id, p)
	})
}

func (s *Server) mkdirSandbox(c *fiber.Ctx) error {
	return keyedBody(c, http.StatusCreated, pathName, func(ctx context.Context, me bullpen.Member, id string, in mkdirIn) (sandbox.FileInfo, error) {
		if err := s.sb.files.Mkdir(ctx, me, id, in.Path, in.Parents); err != nil {
			return sandbox.FileInfo{}, err
		}
		return s.sb.files.Stat(ctx, me, id, in.Path)
	})
}

// mkdirIn is the body of a mkdir; renameIn of a rename.
type (
	mkdirIn struct {
		Path    string `json:"path"`
		Parents bool   `json:"parents"`
	}
	renameIn struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
)

func (s *Server) renameSandboxFile(c *fiber.Ctx) error {
	return keyedBody(c, http.StatusOK, pathName, func(ctx context.Context, me bullpen.Member, id string, in renameIn) (sandbox.FileInfo, error) {
		if err := s.sb.files.Rename(ctx, me, id, in.From, in.To); err != nil {
			return sandbox.FileInfo{}, err
		}
		return s.sb.files.Stat(ctx, me, id, in.To)
	})
}

// streamsBody reports whether the request's handler reads the body as a
// stream; every other request's body is read, bounded, by limitBody. Form
// bodies never stream: the CSRF check may parse them.
func streamsBody(c *fiber.Ctx) bool {
	return (rawBodyRoute(c) && !formBody(c)) || strings.HasPrefix(c.Path(), E2BSandboxPath+"/")
}

// formBody tells whether the request's body is a form encoding.
func formBody(c *fiber.Ctx) bool {
	ct := strings.ToLower(c.Get(fiber.HeaderContentType))
	return strings.HasPrefix(ct, fiber.MIMEMultipartForm) || strings.HasPrefix(ct, fiber.MIMEApplicationForm)
}

// rawBodyRoute tells whether the route takes its body as raw bytes of any
// size: a sandbox file upload or an image import.
func rawBodyRoute(c *fiber.Ctx) bool {
	p := c.Path()
	switch c.Method() {
	case fiber.MethodPut:
		return strings.HasPrefix(p, "/api/v1/sandboxes/") && strings.HasSuffix(p, "/files")
	case fiber.MethodPost:
		return p == "/api/v1/images/import"
	}
	return false
}

// drainLimit is how much of a refused body the server reads and discards
// so that the client, still sending, gets the 413 answer rather than a
// reset connection. Larger bodies are cut off by closing the connection.
const drainLimit = 8 << 20

// limitBody reads the body of every request that does not stream it, up
// to Config.BodyLimit: a larger Content-Length is refused before reading
// (the body is discarded, not kept), and a chunked body is read no further
// than the limit. (The server streams request bodies so that file uploads
// can be large.)
func (s *Server) limitBody(c *fiber.Ctx) error {
	req := c.Request()
	if rawBodyRoute(c) && formBody(c) {
		return refuseForm(c)
	}
	if !req.IsBodyStream() {
		return c.Next()
	}
	body := c.Context().RequestBodyStream()
	if streamsBody(c) {
		// A refusal (no credential, no such sandbox) leaves the body
		// unread: discard it, or close the connection after the answer.
		err := c.Next()
		if err != nil {
			discard(c, body, int64(req.Header.ContentLength()))
		}
		return err
	}
	limit := s.cfg.BodyLimit
	if l, ok := largeBodies[c.Path()]; ok && c.Method() == fiber.MethodPost {
		limit = max(limit, l)
	}
	if cl := req.Header.ContentLength(); cl > limit {
		discard(c, body, int64(cl))
		return fiber.ErrRequestEntityTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(body, int64(limit)+1))
	if err != nil {
		c.Context().SetConnectionClose()
		return bullpen.Errorf(bullpen.EINVALID, "could not read the request body: %s", clipString(fmt.Sprint(err), 80))
	}
	if len(b) > limit {
		discard(c, body, -1)
		return fiber.ErrRequestEntityTooLarge
	}
	req.SetBodyRaw(b)
	return c.Next()
}

// refuseForm refuses a form-encoded body on a raw-bytes route. curl -d
// sends files that way; held to the body limit such an upload would get a
// bare "too large", so say what to send instead.
func refuseForm(c *fiber.Ctx) error {
	if c.Request().IsBodyStream() {
		discard(c, c.Context().RequestBodyStream(), int64(c.Request().Header.ContentLength()))
	}
	ct, _, _ := strings.Cut(c.Get(fiber.HeaderContentType), ";")
	return bullpen.Errorf(bullpen.EINVALID, "this route takes the file's raw bytes as the body, not a form (%s): "+
		"send Content-Type: application/octet-stream (curl: --data-binary @FILE -H 'Content-Type: application/octet-stream')",
		strings.ToLower(strings.TrimSpace(ct)))
}

// largeBodies names the routes whose bodies may exceed Config.BodyLimit,
// with their own bound: a whole-wiki import is an archive of many pages.
var largeBodies = map[string]int{
	"/api/v1/wiki/import": 64 << 20,
}

// discard throws away a refused body of n bytes (-1: unknown, chunked)
// when it is small enough, so the client reads the answer; the connection
// closes unless the whole body was consumed.
func discard(c *fiber.Ctx, body io.Reader, n int64) {
	if n > drainLimit {
		c.Context().SetConnectionClose()
		return
	}
	lim := n
	if n < 0 {
		lim = drainLimit
	}
	m, err := io.Copy(io.Discard, io.LimitReader(body, lim))
	if n < 0 || err != nil || m != n {
		c.Context().SetConnectionClose()
	}
}
