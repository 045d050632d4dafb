package gateway

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// The Gemini API at /gemini, for Gemini CLI and the Google SDKs
// (GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT/gemini, the turn token as
// GEMINI_API_KEY): POST /gemini/{version}/models/{model}:generateContent,
// :streamGenerateContent (with ?alt=sse, SSE frames of
// GenerateContentResponse, or without, a JSON array of them) and
// :countTokens. No provider here speaks it: each request is translated
// for the agent's provider, Chat Completions (gemini_tochat.go) or
// Anthropic Messages (gemini_toanthropic.go), under the turn's budgets
// like any other call (its input counted, maxOutputTokens clamped to
// what is left, settled from the provider's usage), and the provider's
// answer comes back as Gemini's (gemini_answer.go), usageMetadata from
// the provider's own usage. Errors are in Gemini's shape
// {"error":{"code","message","status"}}: bad input a 400
// INVALID_ARGUMENT, a spent budget a 429 RESOURCE_EXHAUSTED.

// KindGemini names the Gemini API, the gateway's third path prefix. No
// Upstream is of this kind.
const KindGemini = "gemini"

// The methods of a model the gateway serves.
const (
	geminiGenerate = "generateContent"
	geminiStream   = "streamGenerateContent"
	geminiCount    = "countTokens"
)

// geminiVersions are the API versions the Google SDKs call.
var geminiVersions = map[string]bool{"v1": true, "v1beta": true, "v1alpha": true}

func (g *Gateway) geminiModel() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &call{ep: endpoint{method: http.MethodPost, path: r.URL.Path, kind: KindGemini}, started: g.cfg.Now()}
		model, method := splitModelCall(r.PathValue("call"))
		if !geminiVersions[r.PathValue("version")] || model == "" ||
			method != geminiGenerate && method != geminiStream && method != geminiCount {
			writeError(w, KindGemini, bullpen.Errorf(bullpen.ENOTFOUND, "no such endpoint: %s %s", r.Method, r.URL.Path), false)
			return
		}
		if err := g.admit(w, r, c); err != nil {
			g.refuse(w, r, c, err)
			return
		}
		c.model = model // a Gemini request names its model in the path only
		req, err := parseGeminiRequest(c.body, method == geminiCount)
		if err != nil {
			g.refuse(w, r, c, err)
			return
		}
		if method == geminiCount {
			countGemini(w, req)
			return
		}
		stream := method == geminiStream
		if err := c.geminiUpstreamBody(req, stream); err != nil {
			g.refuse(w, r, c, err)
			return
		}
		if err := g.reserve(r.Context(), c); err != nil {
			g.refuse(w, r, c, err)
			return
		}
		t := newGeminiWriter(w, newGeminiAnswer(model), c.up.Kind, stream, r.URL.Query().Get("alt") == "sse")
		g.forward(t, withoutQuery(r), c)
		t.finish()
	})
}

// splitModelCall splits "{model}:{method}" (the model may be given as
// models/NAME).
func splitModelCall(s string) (model, method string) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", ""
	}
	return strings.TrimPrefix(s[:i], "models/"), s[i+1:]
}

// geminiUpstreamBody translates the request for the call's provider and
// points the call at its endpoint, whose usage the gateway then reads.
func (c *call) geminiUpstreamBody(req *geminiRequest, stream bool) error {
	var body []byte
	var err error
	if c.up.Kind == KindAnthropic {
		c.ep.api, c.ep.upstreamPath = apiMessages, "/v1/messages"
		body, err = req.anthropicBody(c.model, stream)
	} else {
		c.ep.api, c.ep.upstreamPath = apiChat, "/chat/completions"
		body, err = req.geminiChatBody(c.model, outputFields(apiChat, c.model)[0], stream)
	}
	if err != nil {
		return err
	}
	c.body, c.stream = body, stream
	return nil
}

// withoutQuery is r without its query: alt=sse and a key= credential are
// the Gemini client's, not the provider's.
func withoutQuery(r *http.Request) *http.Request {
	r2 := r.WithContext(r.Context())
	u := *r.URL
	u.RawQuery = ""
	r2.URL = &u
	return r2
}

// countGemini answers :countTokens with the offline tokenizer (neither
// provider kind counts Gemini's contents): the text of the system
// instruction, the contents (function calls and results as their JSON)
// and the function declarations.
func countGemini(w http.ResponseWriter, req *geminiRequest) {
	var sb strings.Builder
	contents := req.Contents
	if req.SystemInstruction != nil {
		contents = append([]geminiContent{*req.SystemInstruction}, contents...)
	}
	for _, c := range contents {
		for _, p := range c.Parts {
			switch {
			case p.Text != nil:
				sb.WriteString(*p.Text)
			case p.FunctionCall != nil:
				sb.WriteString(p.FunctionCall.Name)
				sb.Write(p.FunctionCall.Args)
			case p.FunctionResponse != nil:
				sb.WriteString(p.FunctionResponse.Name)
				sb.Write(p.FunctionResponse.Response)
			}
		}
	}
	if len(req.funcs) > 0 {
		b, _ := json.Marshal(req.funcs)
		sb.Write(b)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(map[string]any{"totalTokens": llm.Count(sb.String())})
}
