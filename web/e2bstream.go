package web

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// streamE2B serves a net/http handler from Fiber with its answer
// streamed: Fiber's own adaptor buffers whole answers, which a stream of
// process output (or a large download) cannot wait for. The handler runs
// in its own goroutine; its status and headers go out when it first
// writes (or returns), then each write, and each Flush pushes what was
// written to the client. The request body streams in as the handler reads
// it, until the answer starts. When a write finds the client gone the
// handler's context ends (fasthttp tells of a closed connection only
// then: a stream that may be silent for long sends keepalives). prefix is
// cut from the path the handler sees.
func (s *Server) streamE2B(c *fiber.Ctx, h http.Handler, prefix string) error {
	fctx := c.Context()
	r, err := netRequest(fctx, prefix)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(s.ctx)
	w := &streamWriter{header: http.Header{}, ready: make(chan struct{}), out: make(chan []byte, 8), ctx: ctx}
	go func() {
		defer w.finish()
		h.ServeHTTP(w, r.WithContext(ctx))
	}()
	<-w.ready
	fctx.Response.SetStatusCode(w.status)
	for k, vs := range w.sent {
		for i, v := range vs {
			if i == 0 {
				fctx.Response.Header.Set(k, v)
			} else {
				fctx.Response.Header.Add(k, v)
			}
		}
	}
	fctx.SetBodyStreamWriter(func(bw *bufio.Writer) {
		defer cancel()
		failed := false
		for b := range w.out {
			if failed {
				continue // drain until the handler, its context ended, returns
			}
			if b == nil {
				failed = bw.Flush() != nil
			} else if _, err := bw.Write(b); err != nil {
				failed = true
			}
			if failed {
				cancel()
			}
		}
		_ = bw.Flush()
	})
	return nil
}

// netRequest builds the net/http request of a Fiber one.
func netRequest(fctx *fasthttp.RequestCtx, prefix string) (*http.Request, error) {
	var body io.Reader = bytes.NewReader(fctx.Request.Body())
	if fctx.Request.IsBodyStream() {
		body = fctx.RequestBodyStream()
	}
	uri := strings.TrimPrefix(string(fctx.RequestURI()), prefix)
	if uri == "" || uri[0] != '/' {
		uri = "/" + uri
	}
	r, err := http.NewRequest(string(fctx.Method()), uri, io.NopCloser(body))
	if err != nil {
		return nil, err
	}
	fctx.Request.Header.VisitAll(func(k, v []byte) {
		r.Header.Add(string(k), string(v))
	})
	r.Host = string(fctx.Host())
	r.RemoteAddr = fctx.RemoteAddr().String()
	r.RequestURI = uri
	r.ContentLength = int64(fctx.Request.Header.ContentLength())
	if r.ContentLength < 0 {
		r.ContentLength = -1
	}
	r.TransferEncoding = nil
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	return r, nil
}

// streamWriter is the handler's http.ResponseWriter: writes go to out in
// order; nil there means flush.
type streamWriter struct {
	header http.Header
	sent   http.Header // the header as it was when the answer started
	status int
	once   sync.Once
	ready  chan struct{}
	out    chan []byte
	ctx    context.Context
}

func (w *streamWriter) Header() http.Header { return w.header }

func (w *streamWriter) WriteHeader(status int) {
	w.once.Do(func() {
		w.status = status
		// The header map is copied by the Fiber side before ready is
		// read; later changes (trailers) are not sent.
		w.sent = w.header.Clone()
		close(w.ready)
	})
}

func (w *streamWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if len(b) == 0 {
		return 0, nil
	}
	select {
	case w.out <- append([]byte(nil), b...):
		return len(b), nil
	case <-w.ctx.Done():
		return 0, w.ctx.Err()
	}
}

// Flush pushes what was written to the client.
func (w *streamWriter) Flush() {
	w.WriteHeader(http.StatusOK)
	select {
	case w.out <- nil:
	case <-w.ctx.Done():
	}
}

// finish ends the answer once the handler returns.
func (w *streamWriter) finish() {
	w.WriteHeader(http.StatusOK)
	close(w.out)
}
