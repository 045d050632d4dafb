package gateway

import (
	"context"
	"net/http"
	"unicode/utf8"

	"github.com/bullpen-hq/bullpen"
)

// record collects one call for the turn's usage and the Recorder.
type record struct {
	c        *call
	method   string
	url      string // upstream, without query or credentials
	request  capped
	response capped
	usage    usageReader
	err      string
	charge   charge // how the call's reservation is settled (chargeFull unless told)
}

func (g *Gateway) newRecord(r *http.Request, c *call) *record {
	return &record{c: c, method: r.Method, url: upstreamURL(c.up.BaseURL, c.ep.upstreamPath),
		request: capped{max: g.cfg.RecordCap}, response: capped{max: g.cfg.RecordCap}, usage: discardUsage{}}
}

// startUsage picks the usage reader for the answer's format.
func (rec *record) startUsage(contentType string) {
	if rec.c.ep.api != "" {
		rec.usage = newUsageReader(rec.c.ep.api, contentType, rec.c.body)
	}
}

// finish settles the call's reservation and records the call. It runs
// with a context the client cannot cancel: tokens spent are counted even
// when the CLI went away mid-stream.
func (rec *record) finish(ctx context.Context, g *Gateway, status int, errMsg string) {
	u := rec.usage.Usage()
	g.settle(ctx, rec.c, rec.charge, u, rec.usage.Complete())
	if g.cfg.Recorder == nil {
		return
	}
	c := rec.c
	mc := bullpen.ModelCall{TurnID: c.turnID, AgentID: c.budget.AgentID, Via: bullpen.ViaGateway, Provider: c.up.Name,
		Model: c.model, Method: rec.method, URL: rec.url,
		Request: rec.request.String(), RequestBytes: rec.request.total, RequestTruncated: rec.request.cut(),
		Response: rec.response.String(), ResponseBytes: rec.response.total, ResponseTruncated: rec.response.cut(),
		Status: status, Error: errMsg, InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens,
		CacheWriteTokens: u.CacheWriteTokens, OutputTokens: u.OutputTokens,
		StartedAt: c.started, DurationMS: g.cfg.Now().Sub(c.started).Milliseconds()}
	if mc.Provider == "" {
		mc.Provider = c.ep.kind
	}
	if err := g.cfg.Recorder.RecordModelCall(ctx, mc); err != nil {
		g.cfg.Logger.Error("gateway: record model call", "turn", c.turnID, "err", err)
	}
}

// capped keeps the first max bytes written to it and counts them all.
type capped struct {
	max   int
	buf   []byte
	total int
}

func (c *capped) Write(p []byte) (int, error) {
	c.total += len(p)
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *capped) cut() bool { return c.total > len(c.buf) }

// String is the kept bytes; a cut body ends at a whole UTF-8 character so
// the record stays valid text.
func (c *capped) String() string {
	b := c.buf
	if c.cut() {
		for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
			if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size > 1 {
				break
			}
			b = b[:len(b)-1]
		}
	}
	return string(b)
}
