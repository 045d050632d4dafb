package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/internal/redact"
)

// hopHeaders are never passed on, in either direction (RFC 9110 §7.6.1).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// clientOnly are request headers the gateway replaces: the client's
// credential in any API's header (the turn token must not reach the provider), its cookies,
// and what the transport sets itself.
var clientOnly = []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Cookie", "Host", "Content-Length", "Accept-Encoding"}

// forward sends the call to its upstream with the real credential and
// relays the answer. The client going away cancels the upstream request.
func (g *Gateway) forward(w http.ResponseWriter, r *http.Request, c *call) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	sec := g.secrets(c.up)
	rec := g.newRecord(r, c)
	target := rec.url + querySuffix(r)
	rec.url = sec.String(rec.url) // the record never shows the base URL's user
	rec.request.Write(sec.Bytes(c.body))
	req, err := http.NewRequestWithContext(ctx, r.Method, target, bytes.NewReader(c.body))
	if err != nil {
		g.refuse(w, r, c, bullpen.Errorf(bullpen.EUNAVAILABLE, "the provider's base URL %q is not usable", sec.String(c.up.BaseURL)))
		return
	}
	req.Header = upstreamHeader(r.Header, c.up)
	wd := newWatchdog(cancel, g.cfg.Timeouts)
	defer wd.stop()
	resp, err := g.client.Do(req)
	if err != nil {
		g.upstreamFailed(w, r, c, rec, wd.explain(err))
		return
	}
	wd.gotHeader()
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		g.relayError(w, r, resp, c, rec, sec)
		return
	}
	rec.charge = chargeUsage
	if err := g.relay(w, resp, rec, wd, sec, c.tee); err != nil {
		rec.err = wd.explain(err).Error()
		rec.charge = chargeFull // the usage, if any, is not the whole answer's
	}
	resp.Body.Close() // the upstream call is over before its slot is freed
	rec.finish(context.WithoutCancel(r.Context()), g, resp.StatusCode, rec.err)
}

// upstreamFailed answers a call whose provider gave no answer.
func (g *Gateway) upstreamFailed(w http.ResponseWriter, r *http.Request, c *call, rec *record, err error) {
	rec.charge = chargeOfFailure(err)
	if r.Context().Err() != nil {
		rec.charge = chargeFull // the provider may have run it
		rec.finish(context.WithoutCancel(r.Context()), g, 0, "the client went away")
		return
	}
	// The cause stays in the log: it names the provider's address, which
	// the sandbox has no business knowing.
	g.cfg.Logger.Warn("gateway: provider did not answer", "provider", c.up.Name, "turn", c.turnID, "err", err)
	why := "the connection failed"
	var te *llm.TimeoutError
	if errors.As(err, &te) {
		why = te.Error()
	}
	e := bullpen.Errorf(bullpen.EUNAVAILABLE, "the model provider %q did not answer: %s", or(c.up.Name, c.up.Kind), why)
	status, body := errorBody(c.ep.kind, e)
	rec.response.Write(body)
	rec.finish(context.WithoutCancel(r.Context()), g, status, e.Message)
	writeError(w, c.ep.kind, e, true) // a provider that did not answer may next time
}

// relay copies a successful answer to the client with its secrets
// redacted (headers and body, also a secret split across two chunks),
// flushing each chunk as it arrives, and tees it into the record and the
// usage reader.
func (g *Gateway) relay(w http.ResponseWriter, resp *http.Response, rec *record, wd *watchdog, sec *redact.Secrets, tee io.Writer) error {
	copyHeader(w.Header(), resp.Header, sec)
	// Without a length the answer ends only when the handler returns, after
	// its usage and record are stored: a CLI that has read its answers has
	// been counted, so its turn can be closed with the right totals.
	w.Header().Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	rec.startUsage(resp.Header.Get("Content-Type"))
	out := sec.Stream(io.MultiWriter(&rec.response, w))
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			wd.pause() // a slow client is not a silent provider
			rec.usage.Write(buf[:n])
			if tee != nil {
				_, _ = tee.Write(buf[:n])
			}
			if _, werr := out.Write(buf[:n]); werr != nil {
				return errors.New("the client went away")
			}
			_ = rc.Flush()
			wd.gotData()
		}
		if err == io.EOF {
			if werr := out.Flush(); werr != nil {
				return errors.New("the client went away")
			}
			_ = rc.Flush()
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// relayError passes the provider's error on with its status, with any
// credential it echoes (OpenAI quotes part of a wrong key) blanked. It is
// recorded before the client sees it.
func (g *Gateway) relayError(w http.ResponseWriter, r *http.Request, resp *http.Response, c *call, rec *record, sec *redact.Secrets) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, g.cfg.MaxBody))
	msg := "the provider answered " + resp.Status
	if err != nil {
		msg = "reading the provider's error: " + sec.String(err.Error())
	}
	body = sec.Bytes(body)
	rec.charge = chargeNone // the provider refused it: it ran nothing
	rec.response.Write(body)
	resp.Body.Close()
	rec.finish(context.WithoutCancel(r.Context()), g, resp.StatusCode, msg)
	copyHeader(w.Header(), resp.Header, sec)
	w.Header().Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// upstreamHeader is the client's request header with its credential
// replaced by the real one.
func upstreamHeader(in http.Header, up Upstream) http.Header {
	h := in.Clone()
	for _, k := range append(hopHeaders, clientOnly...) {
		h.Del(k)
	}
	h.Set("Accept-Encoding", "identity") // the usage tee reads plain bytes
	switch {
	case up.Kind == KindAnthropic && up.OAuthToken != "":
		h.Set("Authorization", "Bearer "+up.OAuthToken)
		h.Set("Anthropic-Beta", withBeta(h.Values("Anthropic-Beta"), OAuthBeta))
	case up.Kind == KindAnthropic && up.APIKey != "":
		h.Set("X-Api-Key", up.APIKey)
	case up.APIKey != "":
		h.Set("Authorization", "Bearer "+up.APIKey)
	}
	if up.Kind == KindAnthropic && h.Get("Anthropic-Version") == "" {
		h.Set("Anthropic-Version", "2023-06-01")
	}
	return h
}

// withBeta joins anthropic-beta flags, adding flag unless present.
func withBeta(have []string, flag string) string {
	var flags []string
	for _, v := range have {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" && f != flag {
				flags = append(flags, f)
			}
		}
	}
	return strings.Join(append(flags, flag), ",")
}

// copyHeader copies response headers without hop-by-hop ones and cookies,
// each value redacted.
func copyHeader(dst, src http.Header, sec *redact.Secrets) {
	for k, vs := range src {
		if k == "Set-Cookie" || containsFold(hopHeaders, k) {
			continue
		}
		for _, v := range vs {
			dst.Add(k, sec.String(v))
		}
	}
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// secrets is the office's secrets with up's credentials and base URL's
// user information among them: what no answer or record may show.
func (g *Gateway) secrets(up Upstream) *redact.Secrets {
	g.cfg.Secrets.Add(up.APIKey, up.OAuthToken, up.BaseURL)
	return g.cfg.Secrets
}

func querySuffix(r *http.Request) string {
	if r.URL.RawQuery == "" {
		return ""
	}
	return "?" + r.URL.RawQuery
}

// upstreamURL joins the base URL and the endpoint's path.
func upstreamURL(base, path string) string { return strings.TrimRight(base, "/") + path }

func newTransport(t llm.Timeouts) *http.Transport {
	d := &net.Dialer{Timeout: t.Connect, KeepAlive: 30 * time.Second}
	return &http.Transport{Proxy: http.ProxyFromEnvironment, DialContext: d.DialContext, TLSHandshakeTimeout: t.Connect,
		ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second}
}

// watchdog cancels an upstream call that waits too long for its first
// byte or goes silent mid-stream, and says which.
type watchdog struct {
	t      llm.Timeouts
	cancel context.CancelFunc
	timer  *time.Timer
	phase  atomic.Value // llm.PhaseFirstByte, then llm.PhaseIdle
	fired  atomic.Bool
}

func newWatchdog(cancel context.CancelFunc, t llm.Timeouts) *watchdog {
	wd := &watchdog{t: t, cancel: cancel}
	wd.phase.Store(llm.PhaseFirstByte)
	wd.timer = time.AfterFunc(t.FirstByte, func() { wd.fired.Store(true); wd.cancel() })
	return wd
}

// gotHeader ends the first-byte wait: from now on silences are bounded.
func (wd *watchdog) gotHeader() { wd.phase.Store(llm.PhaseIdle); wd.timer.Reset(wd.t.Idle) }
func (wd *watchdog) gotData()   { wd.timer.Reset(wd.t.Idle) }
func (wd *watchdog) pause()     { wd.timer.Stop() }
func (wd *watchdog) stop()      { wd.timer.Stop() }

// explain turns an upstream error into a timeout error when the watchdog
// caused it.
func (wd *watchdog) explain(err error) error {
	if !wd.fired.Load() {
		return err
	}
	phase, _ := wd.phase.Load().(string)
	after := wd.t.Idle
	if phase == llm.PhaseFirstByte {
		after = wd.t.FirstByte
	}
	return &llm.TimeoutError{Phase: phase, After: after}
}
