package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/url"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/gofiber/contrib/websocket"
	"github.com/gofiber/fiber/v2"
)

// SandboxExec is what the streaming exec handlers call.
type SandboxExec interface {
	Exec(ctx context.Context, actor bullpen.Member, id string, req sandbox.ExecRequest) (bullpen.SandboxCommand, error)
}

// execHeartbeat is how long an exec stream may stay silent before a
// heartbeat line shows that the connection is alive (and finds out when
// the client has gone, which kills the command).
const execHeartbeat = 10 * time.Second

// execLine is one line of an exec stream: first {"exec_id"}, then output
// chunks {"stream","off","data"|"data_b64"}, heartbeats, and at the end
// either the exit status or an error.
type execLine struct {
	ExecID     string     `json:"exec_id,omitempty"`
	Stream     string     `json:"stream,omitempty"`
	Offset     *int64     `json:"off,omitempty"`
	Data       *string    `json:"data,omitempty"`
	DataB64    []byte     `json:"data_b64,omitempty"`
	Heartbeat  bool       `json:"heartbeat,omitempty"`
	ExitCode   *int       `json:"exit_code,omitempty"`
	Signal     *string    `json:"signal,omitempty"`
	TimedOut   *bool      `json:"timed_out,omitempty"`
	DurationMS *int64     `json:"duration_ms,omitempty"`
	Error      *errorInfo `json:"error,omitempty"`
}

type errorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func chunkLine(ch bullpen.SandboxChunk) execLine {
	off := ch.Offset
	l := execLine{Stream: ch.Stream, Offset: &off}
	if utf8.Valid(ch.Data) {
		d := string(ch.Data)
		l.Data = &d
	} else {
		l.DataB64 = ch.Data
	}
	return l
}

func endLine(res bullpen.SandboxResult, err error) execLine {
	if err != nil {
		return execLine{Error: &errorInfo{Code: bullpen.ErrorCode(err), Message: bullpen.ErrorMessage(err)}}
	}
	ms := res.Duration.Milliseconds()
	return execLine{ExitCode: &res.ExitCode, Signal: &res.Signal, TimedOut: &res.TimedOut, DurationMS: &ms}
}

// execSandbox runs a command and streams its output as NDJSON. Errors
// before the command starts are ordinary API errors; the command is killed
// when the client goes away or the server shuts down.
func (s *Server) execSandbox(c *fiber.Ctx) error {
	var in execIn
	if err := decode(c, &in); err != nil {
		return err
	}
	req, err := in.request()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(s.ctx)
	e, err := s.sb.exec.Exec(ctx, actor(c), c.Params("id"), req)
	if err != nil {
		cancel()
		return err
	}
	c.Set(fiber.HeaderContentType, "application/x-ndjson")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Accel-Buffering", "no")
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer cancel()
		defer e.Close()
		enc := json.NewEncoder(w)
		if enc.Encode(execLine{ExecID: e.ExecID()}) != nil || w.Flush() != nil {
			return
		}
		hb := time.NewTicker(execHeartbeat)
		defer hb.Stop()
		out := e.Output()
		for out != nil {
			select {
			case ch, ok := <-out:
				if !ok {
					out = nil
					continue
				}
				if enc.Encode(chunkLine(ch)) != nil {
					return
				}
				if len(out) == 0 && w.Flush() != nil {
					return
				}
				hb.Reset(execHeartbeat)
			case <-hb.C:
				if enc.Encode(execLine{Heartbeat: true}) != nil || w.Flush() != nil {
					return
				}
			}
		}
		res, err := e.Wait()
		_ = enc.Encode(endLine(res, err))
		_ = w.Flush()
	})
	return nil
}

// execWSUpgrade checks an interactive exec's handshake: a websocket, and
// for cookie sessions a page of this site (browsers apply no CSRF rules
// to websockets).
func (s *Server) execWSUpgrade(c *fiber.Ctx) error {
	if !websocket.IsWebSocketUpgrade(c) {
		return fiber.NewError(fiber.StatusUpgradeRequired, "this endpoint speaks websocket only")
	}
	if by, _ := c.Locals(localByCookie).(bool); by {
		u, err := url.Parse(c.Get(fiber.HeaderOrigin))
		if err != nil || u.Host != c.Hostname() {
			return bullpen.Errorf(bullpen.EFORBIDDEN, "websocket origin %q is not this site", c.Get(fiber.HeaderOrigin))
		}
	}
	c.Locals("sandbox", c.Params("id"))
	return c.Next()
}

// wsIn is a client message of an interactive exec after the first one
// (which is an execIn): stdin data, end of stdin, kill, or a PTY's new
// size.
type wsIn struct {
	Stdin    *string  `json:"stdin"`
	StdinB64 []byte   `json:"stdin_b64"`
	EOF      bool     `json:"eof"`
	Kill     bool     `json:"kill"`
	Resize   *ptySize `json:"resize"`
}

// execWS runs one command interactively: the first client message is the
// command (as for POST …/exec, without stdin), later ones feed stdin; the
// server sends the same objects as the NDJSON stream, then closes.
func (s *Server) execWS() fiber.Handler {
	return websocket.New(func(conn *websocket.Conn) {
		defer s.trackWebsocket()()
		me, _ := conn.Locals(localMember).(bullpen.Member)
		id, _ := conn.Locals("sandbox").(string)
		wc := conn.Conn
		defer wc.Close()
		wc.SetReadLimit(1 << 20)
		var sendMu sync.Mutex // the output loop and the stdin reader (resize errors) both send
		send := func(l execLine) error {
			sendMu.Lock()
			defer sendMu.Unlock()
			wc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			return wc.WriteJSON(l)
		}
		fail := func(err error) {
			_ = send(endLine(bullpen.SandboxResult{}, err))
			wc.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		}
		wc.SetReadDeadline(time.Now().Add(30 * time.Second))
		var in execIn
		if err := wc.ReadJSON(&in); err != nil {
			fail(bullpen.Errorf(bullpen.EINVALID, "the first message must be the command as JSON"))
			return
		}
		wc.SetReadDeadline(time.Time{})
		if in.Stdin != nil || in.StdinB64 != nil {
			fail(bullpen.Errorf(bullpen.EINVALID, "send stdin in later messages"))
			return
		}
		req, err := in.request()
		if err != nil {
			fail(err)
			return
		}
		pr, pw := io.Pipe()
		req.Stdin = pr
		ctx, cancel := context.WithCancel(s.ctx)
		defer cancel()
		e, err := s.sb.exec.Exec(ctx, me, id, req)
		if err != nil {
			pw.Close()
			fail(err)
			return
		}
		defer e.Close()
		resize := func(*ptySize) error {
			return bullpen.Errorf(bullpen.EINVALID, "resize: the command has no PTY (start it with \"pty\")")
		}
		if r, ok := e.(ptyResizer); ok && in.PTY != nil {
			resize = func(sz *ptySize) error { return r.Resize(ctx, sz.Rows, sz.Cols) }
		}
		gone := cancel // the client closed the socket: the command is killed
		if en, ok := e.(ender); ok && in.PTY != nil {
			gone = func() { en.End(); cancel() } // a terminal closed: the session ended
		}
		readerDone := make(chan struct{})
		go func() { defer close(readerDone); s.feedStdin(wc, pw, e, gone, resize, send) }()
		// No goroutine may touch the connection once this returns. Closing a
		// hijacked fasthttp connection waits for this handler to return, so
		// an expired deadline is what wakes the stdin reader.
		defer func() { pw.Close(); wc.SetReadDeadline(time.Now()); <-readerDone }()
		if send(execLine{ExecID: e.ExecID()}) != nil {
			return
		}
		for ch := range e.Output() {
			if send(chunkLine(ch)) != nil {
				return
			}
		}
		res, err := e.Wait()
		pw.Close()
		_ = send(endLine(res, err))
		wc.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	})
}

// ptyResizer is a command on a terminal that can be resized without a
// command of its own in the history (*sandboxes.Exec).
type ptyResizer interface {
	Resize(ctx context.Context, rows, cols int) error
}

// ender is a command its user can end by closing it: a terminal session
// closed is recorded as ended, not as killed (*sandboxes.Exec).
type ender interface{ End() }

// feedStdin copies stdin messages into the command until EOF, and resizes
// its PTY; the client closing the socket calls gone, which ends the
// command. A resize that fails is answered with an error message; the
// command runs on.
func (s *Server) feedStdin(wc interface{ ReadJSON(any) error }, pw *io.PipeWriter, e bullpen.SandboxCommand, gone func(),
	resize func(*ptySize) error, send func(execLine) error) {
	defer pw.Close()
	for {
		var m wsIn
		if err := wc.ReadJSON(&m); err != nil {
			gone()
			return
		}
		switch {
		case m.Kill:
			_ = e.Kill()
		case m.Resize != nil:
			if err := resize(m.Resize); err != nil {
				_ = send(execLine{Error: &errorInfo{Code: bullpen.ErrorCode(err), Message: bullpen.ErrorMessage(err)}})
			}
		case m.Stdin != nil:
			if _, err := io.WriteString(pw, *m.Stdin); err != nil {
				return
			}
		case m.StdinB64 != nil:
			if _, err := pw.Write(m.StdinB64); err != nil {
				return
			}
		}
		if m.EOF {
			pw.Close()
		}
	}
}
