package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/bullpen-hq/bullpen"
)

// The Responses API (Open Responses) at /openai/v1/responses, its
// /compact and its /input_tokens. Every request is read first: its shape
// is checked, and previous_response_id and the gateway's own compaction
// items are resolved from the ResponseStore as the calling agent (another
// agent's id is not found). Then it goes to the provider natively, or,
// for a provider that serves only Chat Completions, translated
// (responses_tochat.go, responses_build.go, responses_translate.go).
// Either way the turn's budget holds: the input is counted and the output
// limit clamped and reserved before the call, and the call is settled
// from the provider's own usage.

// responsesOp is one of the Responses paths.
type responsesOp struct {
	path, upstreamPath string
	api                string
}

var (
	opCreate  = responsesOp{"/openai/v1/responses", "/responses", apiResponses}
	opCompact = responsesOp{"/openai/v1/responses/compact", "/responses/compact", apiCompact}
	opCount   = responsesOp{"/openai/v1/responses/input_tokens", "/responses/input_tokens", ""}
)

var responsesOps = []responsesOp{opCreate, opCompact, opCount}

func (g *Gateway) responses(op responsesOp) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &call{ep: endpoint{method: http.MethodPost, path: op.path, kind: KindOpenAI, upstreamPath: op.upstreamPath, api: op.api},
			started: g.cfg.Now()}
		if err := g.admit(w, r, c); err != nil {
			g.refuse(w, r, c, err)
			return
		}
		req, err := parseResponsesRequest(c.body)
		if err != nil {
			g.refuse(w, r, c, err)
			return
		}
		changed, err := req.resolve(r.Context(), g.cfg.Responses, c.member.ID)
		if err != nil {
			g.refuse(w, r, c, err)
			return
		}
		orig := c.body
		c.body = req.nativeBody(orig, changed)
		if g.native(c.up) && g.tryNative(w, r, c, req, op) {
			return
		}
		// Translated: a fresh call for the Chat request (a native try
		// that found no /responses was recorded and settled on its own).
		c.res, c.tee, c.started = nil, nil, g.cfg.Now()
		c.body = req.nativeBody(orig, changed)
		switch op {
		case opCreate:
			g.createViaChat(w, r, c, req)
		case opCompact:
			g.compactViaChat(w, r, c, req)
		default:
			g.countLocally(w, c)
		}
	})
}

// native reports whether up is tried with the Responses API itself.
func (g *Gateway) native(up Upstream) bool {
	if up.API != "" {
		return up.API == APIResponses
	}
	_, chat := g.chatOnly.Load(up.BaseURL)
	return !chat
}

// tryNative forwards the request to the provider's own Responses API. It
// returns false when the provider has no such path (404 or 405, not a
// missing model) and may be tried translated: nothing was written then.
func (g *Gateway) tryNative(w http.ResponseWriter, r *http.Request, c *call, req *responsesRequest, op responsesOp) bool {
	if c.ep.api != "" {
		if err := g.reserve(r.Context(), c); err != nil {
			g.refuse(w, r, c, err)
			return true
		}
	}
	var capture *nativeCapture
	if op == opCreate {
		capture = &nativeCapture{ctx: context.WithoutCancel(r.Context()), keep: g.keeper(c, req)}
		c.tee = capture
	}
	dw := &missingWriter{w: w, detect: c.up.API == ""}
	g.forward(dw, r, c)
	if !dw.missing() {
		dw.release()
		if capture != nil {
			capture.end(context.WithoutCancel(r.Context()))
		}
		return true
	}
	if op == opCreate { // a server may lack only the newer paths
		g.chatOnly.Store(c.up.BaseURL, true)
	}
	return false
}

// keeper stores a finished answer's conversation for previous_response_id
// (unless the request said store: false).
func (g *Gateway) keeper(c *call, req *responsesRequest) func(ctx context.Context, id string, output []any) {
	return func(ctx context.Context, id string, output []any) {
		if req.Store != nil && !*req.Store || id == "" {
			return
		}
		items := append([]json.RawMessage{}, req.items...)
		for _, o := range output {
			b, err := json.Marshal(o)
			if err == nil {
				items = append(items, b)
			}
		}
		all, _ := json.Marshal(items)
		err := g.cfg.Responses.PutResponse(ctx, id, c.member.ID, c.turnID, all)
		if err != nil {
			g.cfg.Logger.Error("gateway: store response", "turn", c.turnID, "err", err)
		}
	}
}

// createViaChat serves POST /responses from a Chat Completions provider.
func (g *Gateway) createViaChat(w http.ResponseWriter, r *http.Request, c *call, req *responsesRequest) {
	if err := g.reserve(r.Context(), c); err != nil {
		g.refuse(w, r, c, err)
		return
	}
	c.ep.api, c.ep.upstreamPath = apiChat, "/chat/completions"
	if req.MaxOutput == nil || *req.MaxOutput > c.res.Output {
		n := c.res.Output
		req.MaxOutput = &n
	}
	body, custom, err := req.chatBody(c.model, outputFields(apiChat, c.model)[0])
	if err != nil {
		g.refuse(w, r, c, err)
		return
	}
	c.body = body
	b := newResponseBuilder(req, c.model, custom, g.cfg.Now().Unix())
	t := newChatTranslator(w, b, req.Stream)
	g.forward(t, r, c)
	keep := g.keeper(c, req)
	t.finish(context.WithoutCancel(r.Context()), func(ctx context.Context, output []any) { keep(ctx, b.id, output) })
}

// countLocally answers /responses/input_tokens with the offline tokenizer,
// for a provider that cannot count.
func (g *Gateway) countLocally(w http.ResponseWriter, c *call) {
	n := countTokens(c.body)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "response.input_tokens", "input_tokens": n})
}

// missingWriter passes an answer on, except a 404 or 405 while detecting
// (the provider has no such path), which it holds; a held answer that
// says the model is missing is passed on by release after all.
type missingWriter struct {
	w      http.ResponseWriter
	detect bool
	hdr    http.Header
	status int
	held   bytes.Buffer
}

func (m *missingWriter) Header() http.Header {
	if m.hdr == nil {
		m.hdr = http.Header{}
	}
	return m.hdr
}

func (m *missingWriter) WriteHeader(status int) {
	if m.status != 0 {
		return
	}
	m.status = status
	if m.holding() {
		return
	}
	for k, vs := range m.hdr {
		m.w.Header()[k] = vs
	}
	m.w.WriteHeader(status)
}

func (m *missingWriter) holding() bool {
	return m.detect && (m.status == http.StatusNotFound || m.status == http.StatusMethodNotAllowed)
}

func (m *missingWriter) Write(p []byte) (int, error) {
	if m.status == 0 {
		m.WriteHeader(http.StatusOK)
	}
	if m.holding() {
		return m.held.Write(p)
	}
	return m.w.Write(p)
}

func (m *missingWriter) Flush() {
	if !m.holding() {
		_ = http.NewResponseController(m.w).Flush()
	}
}

// missing reports whether the provider has no such path: a held answer
// that is not the API's "model not found".
func (m *missingWriter) missing() bool {
	if !m.holding() {
		return false
	}
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	return json.Unmarshal(m.held.Bytes(), &e) != nil || e.Error.Code != "model_not_found"
}

// release passes a held answer on.
func (m *missingWriter) release() {
	if !m.holding() {
		return
	}
	m.detect = false
	for k, vs := range m.hdr {
		m.w.Header()[k] = vs
	}
	m.w.WriteHeader(m.status)
	_, _ = m.w.Write(m.held.Bytes())
}

// errNoSummary is the answer to a compaction the provider gave no text for.
var errNoSummary = bullpen.Errorf(bullpen.EUNAVAILABLE, "the model provider's compaction answer had no text")
