package call

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// exchange is one HTTP request and response as they went over the wire,
// kept by Capture when the call's context carries an llm.Recorder.
type exchange struct {
	mu      sync.Mutex
	seen    bool
	started time.Time
	method  string
	url     string
	req     []byte
	resp    bytes.Buffer
	status  int
}

// keep reads the request body (replacing it, so it is still sent) and
// wraps the response body so every byte the provider reads is kept too.
func (x *exchange) keep(req *http.Request) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.seen, x.started, x.method, x.url = true, time.Now(), req.Method, redactURL(req.URL)
	x.req, x.resp = nil, bytes.Buffer{}
	if req.Body == nil || req.Body == http.NoBody {
		return nil
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return err
	}
	x.req = body
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return nil
}

func (x *exchange) answered(res *http.Response) {
	x.mu.Lock()
	x.status = res.StatusCode
	x.mu.Unlock()
	res.Body = &teeBody{rc: res.Body, x: x}
}

type teeBody struct {
	rc io.ReadCloser
	x  *exchange
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.x.mu.Lock()
		b.x.resp.Write(p[:n])
		b.x.mu.Unlock()
	}
	return n, err
}

func (b *teeBody) Close() error { return b.rc.Close() }

// redactURL drops credentials from a URL: user info and query parameters
// that look like keys.
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	q := c.Query()
	for k := range q {
		if lk := strings.ToLower(k); strings.Contains(lk, "key") || strings.Contains(lk, "token") {
			q.Set(k, "REDACTED")
		}
	}
	c.RawQuery = q.Encode()
	return c.String()
}

// Outcome is what a provider knows of an attempt once it has ended.
type Outcome struct {
	Provider string
	Model    string
	Usage    llm.Usage
	Err      error
}

// Report hands the attempt's exchange to the context's llm.Recorder, if
// there is one and a request went out. Recording outlives the attempt's
// deadline (the call is over either way) and its errors are dropped.
func (c *Capture) Report(ctx context.Context, o Outcome) {
	rec := llm.RecorderFrom(ctx)
	x := &c.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if rec == nil || !x.seen {
		return
	}
	mc := bullpen.ModelCall{Via: bullpen.ViaBuiltin, Provider: o.Provider, Model: o.Model, Method: x.method, URL: x.url,
		Request: string(x.req), RequestBytes: len(x.req), Response: x.resp.String(), ResponseBytes: x.resp.Len(),
		Status: x.status, InputTokens: o.Usage.InputTokens, CachedInputTokens: o.Usage.CachedInputTokens,
		CacheWriteTokens: o.Usage.CacheWriteTokens, OutputTokens: o.Usage.OutputTokens,
		StartedAt: x.started.UTC(), DurationMS: time.Since(x.started).Milliseconds()}
	if o.Err != nil {
		mc.Error = o.Err.Error()
	}
	_ = rec.RecordModelCall(context.WithoutCancel(ctx), mc)
}
