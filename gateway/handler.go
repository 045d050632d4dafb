package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// endpoint is one path the gateway serves and where it goes upstream.
type endpoint struct {
	method, path string
	kind         string
	upstreamPath string // appended to Upstream.BaseURL
	// api names the usage format; "" for calls that use no tokens (token
	// counting, the model list), which are neither budgeted nor counted.
	api string
}

// APIs whose usage the gateway reads.
const (
	apiMessages  = "messages"
	apiChat      = "chat"
	apiResponses = "responses"
	apiCompact   = "compact" // usage as Responses', no output limit to clamp
)

// endpoints are the paths the vendors' SDKs use below their base URLs.
// Claude Code adds ?beta=true to its paths; the query is passed on.
var endpoints = []endpoint{
	{"POST", "/anthropic/v1/messages", KindAnthropic, "/v1/messages", apiMessages},
	{"POST", "/anthropic/v1/messages/count_tokens", KindAnthropic, "/v1/messages/count_tokens", ""},
	{"POST", "/openai/v1/chat/completions", KindOpenAI, "/chat/completions", apiChat},
	{"GET", "/openai/v1/models", KindOpenAI, "/models", ""},
}

// call is one request in progress.
type call struct {
	ep      endpoint
	member  bullpen.Member
	turnID  int64
	budget  Budget
	up      Upstream
	body    []byte
	model   string
	stream  bool // the client asked for a stream
	started time.Time
	res     *Reservation // the call's tokens reserved, until settled
	tee     io.Writer    // also gets a successful answer's bytes, before the client
}

func (g *Gateway) endpoint(ep endpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &call{ep: ep, started: g.cfg.Now()}
		if err := g.prepare(w, r, c); err != nil {
			g.refuse(w, r, c, err)
			return
		}
		g.forward(w, r, c)
	})
}

// prepare authenticates the request, reads and checks its body, finds the
// agent's provider and reserves the call's tokens. Nothing is forwarded
// unless it returns nil.
func (g *Gateway) prepare(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := g.admit(w, r, c); err != nil {
		return err
	}
	if c.ep.api == "" {
		return nil
	}
	return g.reserve(r.Context(), c)
}

// admit authenticates the request, reads and checks its body and finds
// the agent's provider.
func (g *Gateway) admit(w http.ResponseWriter, r *http.Request, c *call) error {
	ctx := r.Context()
	if err := g.authenticate(ctx, r, c); err != nil {
		return err
	}
	if err := g.readBody(w, r, c); err != nil {
		return err
	}
	up, err := g.cfg.Upstreams.Upstream(ctx, c.member)
	if err != nil {
		return fmt.Errorf("gateway: upstream of @%s: %w", c.member.Handle, err)
	}
	c.up = up
	if up.Kind != c.ep.kind && c.ep.kind != KindGemini { // Gemini is translated for either kind
		return bullpen.Errorf(bullpen.EINVALID, "@%s's model provider %q speaks the %s API, not %s: point the CLI at the gateway's /%s endpoint",
			c.member.Handle, up.Name, up.Kind, c.ep.kind, up.Kind)
	}
	if c.model == "" {
		c.model = up.Model
	}
	return nil
}

// authenticate resolves the request's turn token: x-api-key (Claude Code
// with ANTHROPIC_API_KEY) or Authorization: Bearer (ANTHROPIC_AUTH_TOKEN,
// Codex and the OpenAI SDKs); on the Gemini paths also x-goog-api-key or
// the key query parameter, as the Google SDKs send an API key.
func (g *Gateway) authenticate(ctx context.Context, r *http.Request, c *call) error {
	h := r.Header
	secret := h.Get("X-Api-Key")
	if c.ep.kind == KindGemini && secret == "" {
		secret = h.Get("X-Goog-Api-Key")
	}
	if auth := h.Get("Authorization"); secret == "" && len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
		secret = strings.TrimSpace(auth[7:])
	}
	if c.ep.kind == KindGemini && secret == "" {
		secret = r.URL.Query().Get("key")
	}
	if secret == "" {
		how := "x-api-key or Authorization: Bearer"
		if c.ep.kind == KindGemini {
			how = "x-goog-api-key (the Gemini API key)"
		}
		return bullpen.Errorf(bullpen.EUNAUTHORIZED, "missing credential: send the turn's token as %s", how)
	}
	m, turnID, err := g.cfg.Auth.AuthenticateTurn(ctx, secret)
	switch {
	case bullpen.IsCode(err, bullpen.EUNAUTHORIZED):
		return bullpen.Errorf(bullpen.EUNAUTHORIZED, "invalid, revoked or expired token")
	case err != nil:
		return fmt.Errorf("gateway: authenticate: %w", err)
	case turnID == 0:
		return bullpen.Errorf(bullpen.EUNAUTHORIZED, "not a turn token: the model gateway serves agent CLI turns only")
	}
	c.member, c.turnID = m, turnID
	return nil
}

// readBody reads the request body up to the limit and, for a POST,
// checks that it is one JSON object and reads its model and stream flag.
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request, c *call) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.cfg.MaxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return bullpen.Errorf(bullpen.ETOOLARGE, "request body over the gateway's limit of %d bytes", g.cfg.MaxBody)
	case err != nil:
		return bullpen.Errorf(bullpen.EINVALID, "reading the request body: %v", err)
	}
	c.body = body
	if r.Method != http.MethodPost {
		return nil
	}
	var head struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.Unmarshal(body, &head); err != nil || !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		return bullpen.Errorf(bullpen.EINVALID, "the request body is not a JSON object: %s", jsonProblem(err))
	}
	c.model, c.stream = head.Model, head.Stream
	return nil
}

// jsonProblem says briefly what is wrong with a body that did not decode.
func jsonProblem(err error) string {
	if err == nil {
		return "it is not an object"
	}
	return err.Error()
}

// refuse answers a request that is not forwarded, and records it when it
// belongs to a turn.
func (g *Gateway) refuse(w http.ResponseWriter, r *http.Request, c *call, err error) {
	if bullpen.ErrorCode(err) == bullpen.EINTERNAL {
		g.cfg.Logger.Error("gateway: request failed", "path", r.URL.Path, "turn", c.turnID, "err", err)
	}
	status, body := errorBody(c.ep.kind, err)
	g.settle(context.WithoutCancel(r.Context()), c, chargeNone, llm.Usage{}, true)
	if c.turnID != 0 {
		rec := g.newRecord(r, c)
		rec.request.Write(c.body)
		rec.response.Write(body)
		rec.finish(context.WithoutCancel(r.Context()), g, status, bullpen.ErrorMessage(err))
	}
	retry := bullpen.ErrorCode(err) == bullpen.EINTERNAL || busy(c, err)
	if busy(c, err) {
		setRetryAfter(w)
	}
	writeError(w, c.ep.kind, err, retry)
}
