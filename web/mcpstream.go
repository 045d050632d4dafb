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
	"github.com/gofiber/fiber/v2/middleware/adaptor"
)

// streamHTTP serves an http.Handler from Fiber without buffering a
// streamed answer: Fiber's own adaptor holds the whole response until
// the handler returns, which an MCP event stream (progress
// notifications, subscriptions/listen) never does. The handler runs in
// its own goroutine and writes into a pipe; once it commits its header,
// an application/json answer is read whole and a text/event-stream one
// is passed on chunk by chunk, each flushed to the client. When the
// client goes away, the flush fails and ctx's cancel stops the handler.
func streamHTTP(c *fiber.Ctx, ctx context.Context, cancel context.CancelFunc, h http.Handler) error {
	r, err := adaptor.ConvertRequest(c, true)
	if err != nil {
		cancel()
		return err
	}
	body := bytes.Clone(c.Body()) // fasthttp reuses its buffers
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	r = r.WithContext(ctx)

	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, pw: pw, committed: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer pw.Close()
		h.ServeHTTP(w, r)
		w.WriteHeader(http.StatusOK) // no-op if already written
	}()
	<-w.committed

	c.Status(w.status)
	for k, vs := range w.sent {
		for _, v := range vs {
			c.Response().Header.Add(k, v)
		}
	}
	if !strings.HasPrefix(w.sent.Get("Content-Type"), "text/event-stream") {
		defer cancel()
		b, err := io.ReadAll(pr)
		<-done
		if err != nil {
			return err
		}
		return c.Send(b)
	}
	c.Set("X-Accel-Buffering", "no")
	c.Context().SetBodyStreamWriter(func(bw *bufio.Writer) {
		defer cancel()
		buf := make([]byte, 32<<10)
		for {
			n, err := pr.Read(buf)
			if n > 0 {
				bw.Write(buf[:n])
				if bw.Flush() != nil {
					cancel() // the client left: stop the handler
					pr.CloseWithError(io.ErrClosedPipe)
					<-done
					return
				}
			}
			if err != nil {
				<-done
				return
			}
		}
	})
	return nil
}

// pipeWriter is the handler's http.ResponseWriter: the header is
// committed on the first WriteHeader, Write or Flush, and the body goes
// into the pipe.
type pipeWriter struct {
	header    http.Header
	sent      http.Header // the header as committed
	pw        *io.PipeWriter
	once      sync.Once
	status    int
	committed chan struct{}
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(status int) {
	w.once.Do(func() {
		w.status = status
		w.sent = w.header.Clone() // later changes no longer count
		close(w.committed)
	})
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}

// Flush commits the header; every Write already reaches the client's
// stream as soon as the Fiber side reads it.
func (w *pipeWriter) Flush() { w.WriteHeader(http.StatusOK) }
