package web

import (
	"io/fs"
	"mime"
	"path"
	"strings"
	"sync"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/static"
	"github.com/gofiber/fiber/v2"
)

// staticFile is one embedded file as served: its bytes in each coding,
// encoded on first request and kept (the files never change while the
// binary runs).
type staticFile struct {
	typ     string
	version string
	raw     []byte
	mu      sync.Mutex
	encoded map[string][]byte // coding → body; nil entry: not worth it
}

// staticFiles serves the embedded dashboard files under /static/. A URL
// whose ?v= is the file's content hash (what static.URL writes into every
// page) can never name other bytes, so it is cached for a year as
// immutable; any other URL is revalidated by ETag. Text files go out
// brotli- or gzip-compressed as the client asks, with Vary:
// Accept-Encoding.
type staticFiles struct {
	mu    sync.Mutex
	files map[string]*staticFile
}

func newStaticFiles() *staticFiles { return &staticFiles{files: map[string]*staticFile{}} }

func (s *staticFiles) file(name string) (*staticFile, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.files[name]; ok {
		return f, true
	}
	version, ok := static.Version(name)
	if !ok {
		return nil, false
	}
	raw, err := fs.ReadFile(static.FS, name)
	if err != nil {
		return nil, false
	}
	typ := mime.TypeByExtension(path.Ext(name))
	if typ == "" {
		typ = "application/octet-stream"
	}
	f := &staticFile{typ: typ, version: version, raw: raw, encoded: map[string][]byte{}}
	s.files[name] = f
	return f, true
}

// compressible says whether a type gains from compression (images other
// than SVG are compressed already).
func compressible(typ string) bool {
	return strings.HasPrefix(typ, "text/") || strings.Contains(typ, "javascript") ||
		strings.Contains(typ, "json") || strings.HasPrefix(typ, "image/svg")
}

// body returns the file's bytes in enc, or the raw bytes and "" when enc
// is "" or does not make the file smaller.
func (f *staticFile) body(enc string) ([]byte, string) {
	if enc == "" || !compressible(f.typ) || len(f.raw) < minCompress {
		return f.raw, ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	b, done := f.encoded[enc]
	if !done {
		out, err := encodeBody(enc, f.raw, levelOnce)
		if err == nil && len(out) < len(f.raw) {
			b = out
		}
		f.encoded[enc] = b
	}
	if b == nil {
		return f.raw, ""
	}
	return b, enc
}

func (s *staticFiles) serve(c *fiber.Ctx) error {
	// Fiber's Params alias the request buffer it reuses; the name is kept
	// as a key of s.files, so it must own its bytes.
	name := strings.Clone(strings.TrimPrefix(c.Params("*"), "/"))
	f, ok := s.file(name)
	if !ok {
		return bullpen.Errorf(bullpen.ENOTFOUND, "no such static file: %s", name)
	}
	body, enc := f.body(negotiateEncoding(c.Get(fiber.HeaderAcceptEncoding)))
	etag := `"` + f.version + `"`
	if enc != "" {
		etag = `"` + f.version + "-" + enc + `"`
	}
	c.Set(fiber.HeaderContentType, f.typ)
	c.Set(fiber.HeaderETag, etag)
	if compressible(f.typ) {
		c.Vary(fiber.HeaderAcceptEncoding)
	}
	if c.Query("v") == f.version {
		c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	} else {
		c.Set(fiber.HeaderCacheControl, "no-cache")
	}
	if enc != "" {
		c.Set(fiber.HeaderContentEncoding, enc)
	}
	if inm := c.Get(fiber.HeaderIfNoneMatch); inm != "" && strings.Contains(inm, etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	return c.Send(body)
}
