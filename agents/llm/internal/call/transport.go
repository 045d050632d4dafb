package call

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

// Client returns an HTTP client for a provider whose requests obey the
// connect, first-byte and idle timeouts: def, overridden per call by
// llm.WithTimeouts on the request's context. base (nil: a new client) keeps
// its own transport when that is not an *http.Transport, without the
// connect timeout then.
func Client(base *http.Client, def llm.Timeouts) *http.Client {
	def = def.Or(llm.DefaultTimeouts)
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if t, ok := rt.(*http.Transport); ok {
		t = t.Clone()
		t.DialContext = dialer(def)
		rt = t
	}
	c.Transport = &timeoutTransport{base: rt, def: def}
	return c
}

// dialer bounds connecting by the call's connect timeout. The transport
// dials with a context that keeps the request's values, so the per-call
// setting is seen here.
func dialer(def llm.Timeouts) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := llm.TimeoutsFrom(ctx).Or(def).Connect
		conn, err := (&net.Dialer{Timeout: d, KeepAlive: 30 * time.Second}).DialContext(ctx, network, addr)
		var ne net.Error
		if err != nil && errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
			return nil, &llm.TimeoutError{Phase: llm.PhaseConnect, After: d}
		}
		return conn, err
	}
}

type timeoutTransport struct {
	base http.RoundTripper
	def  llm.Timeouts
}

// RoundTrip arms the first-byte timer until the body's first byte, then
// the idle timer on every read; a timer that fires cancels the request
// with a *llm.TimeoutError as its cause.
func (t *timeoutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	to := llm.TimeoutsFrom(req.Context()).Or(t.def)
	ctx, cancel := context.WithCancelCause(req.Context())
	w := &watch{cancel: cancel}
	w.arm(to.FirstByte, &llm.TimeoutError{Phase: llm.PhaseFirstByte, After: to.FirstByte})
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		w.stop()
		cause := context.Cause(ctx)
		cancel(nil)
		var te *llm.TimeoutError
		if errors.As(cause, &te) {
			return nil, te
		}
		return nil, err
	}
	resp.Body = &watchedBody{rc: resp.Body, w: w, ctx: ctx, idle: to.Idle}
	return resp, nil
}

// watch is a timer that cancels a request with a cause.
type watch struct {
	mu     sync.Mutex
	t      *time.Timer
	cancel context.CancelCauseFunc
}

func (w *watch) arm(d time.Duration, cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t != nil {
		w.t.Stop()
	}
	w.t = time.AfterFunc(d, func() { w.cancel(cause) })
}

func (w *watch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t != nil {
		w.t.Stop()
	}
}

type watchedBody struct {
	rc   io.ReadCloser
	w    *watch
	ctx  context.Context
	idle time.Duration
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.w.arm(b.idle, &llm.TimeoutError{Phase: llm.PhaseIdle, After: b.idle})
	}
	if err != nil && err != io.EOF {
		var te *llm.TimeoutError
		if errors.As(context.Cause(b.ctx), &te) {
			return n, te
		}
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.w.stop()
	b.w.cancel(nil)
	return b.rc.Close()
}
