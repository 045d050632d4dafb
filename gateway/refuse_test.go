package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// errorShape decodes an error body and checks it is in the API's own
// shape: Anthropic {"type":"error","error":{"type","message"}}, OpenAI
// {"error":{"message","type","code"}}. It returns the error's type.
func errorShape(t *testing.T, kind string, body []byte) (typ, msg string) {
	t.Helper()
	var v struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("error body %q is not JSON: %v", body, err)
	}
	if kind == KindAnthropic && v.Type != "error" {
		t.Errorf("anthropic error body %s lacks type error", body)
	}
	if kind == KindOpenAI && v.Type != "" {
		t.Errorf("openai error body %s has a top-level type", body)
	}
	if v.Error.Type == "" || v.Error.Message == "" {
		t.Errorf("error body %s lacks error.type or error.message", body)
	}
	return v.Error.Type, v.Error.Message
}

// bothUpstreams starts an Anthropic and an OpenAI fake; each test picks one.
func fakeUpstreams(t *testing.T) (Upstream, Upstream) {
	t.Helper()
	fa := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply { return llmtest.Reply{Text: "hi"} })
	fo := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply { return llmtest.Reply{Text: "hi"} })
	t.Cleanup(fa.Close)
	t.Cleanup(fo.Close)
	return Upstream{Kind: KindAnthropic, BaseURL: fa.BaseURL(), APIKey: realKey, Name: "anthropic"},
		Upstream{Kind: KindOpenAI, BaseURL: fo.BaseURL(), APIKey: realKey, Name: "openai"}
}

// TestRefusedNotForwarded: a request without a valid turn token, with a
// body that is not JSON, or too big, is answered in the API's error shape
// and never reaches the provider.
func TestRefusedNotForwarded(t *testing.T) {
	ant, oai := fakeUpstreams(t)
	ok := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	huge := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 2<<10) + `"}]}`
	cases := []struct {
		name, cred, token, body string
		status                  int
		anthropicType           string
		openAIType              string
	}{
		{"missing token", "", "", ok, 401, "authentication_error", "invalid_request_error"},
		{"unknown token", "bearer", "bp_revoked", ok, 401, "authentication_error", "invalid_request_error"},
		{"agent token without a turn", "x-api-key", agentTok, ok, 401, "authentication_error", "invalid_request_error"},
		{"bad json", "bearer", turnToken, `{"model":`, 400, "invalid_request_error", "invalid_request_error"},
		{"json array", "bearer", turnToken, `[1,2]`, 400, "invalid_request_error", "invalid_request_error"},
		{"too big", "bearer", turnToken, huge, 413, "request_too_large", "invalid_request_error"},
	}
	for _, kind := range []string{KindAnthropic, KindOpenAI} {
		up, path := ant, "/anthropic/v1/messages"
		if kind == KindOpenAI {
			up, path = oai, "/openai/v1/chat/completions"
		}
		for _, tc := range cases {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				r := newRig(t, up, func(c *Config) { c.MaxBody = 1 << 10 })
				status, _, body := r.post(t, path, tc.cred, tc.token, tc.body)
				if status != tc.status {
					t.Fatalf("status = %d (%s), want %d", status, body, tc.status)
				}
				want := tc.anthropicType
				if kind == KindOpenAI {
					want = tc.openAIType
				}
				if typ, _ := errorShape(t, kind, body); typ != want {
					t.Errorf("error type = %q, want %q", typ, want)
				}
				if n := r.tap.count(); n != 0 {
					t.Errorf("%d requests reached the provider, want 0", n)
				}
				if u, adds, _ := r.turns.snapshot(); adds != 0 {
					t.Errorf("usage added: %+v", u)
				}
			})
		}
	}
}

// TestWrongKind: an agent whose provider speaks one API gets a clear
// error, in the shape of the API it called, from the other.
func TestWrongKind(t *testing.T) {
	ant, oai := fakeUpstreams(t)
	r := newRig(t, oai, nil)
	status, _, body := r.post(t, "/anthropic/v1/messages", "x-api-key", turnToken, `{"model":"m","max_tokens":5,"messages":[]}`)
	_, msg := errorShape(t, KindAnthropic, body)
	if status != 400 || !strings.Contains(msg, "speaks the openai API") || r.tap.count() != 0 {
		t.Errorf("anthropic call to an openai agent = %d %q, %d forwarded", status, msg, r.tap.count())
	}
	r = newRig(t, ant, nil)
	status, _, body = r.post(t, "/openai/v1/responses", "bearer", turnToken, `{"model":"m","input":"hi"}`)
	_, msg = errorShape(t, KindOpenAI, body)
	if status != 400 || !strings.Contains(msg, "speaks the anthropic API") || r.tap.count() != 0 {
		t.Errorf("openai call to an anthropic agent = %d %q, %d forwarded", status, msg, r.tap.count())
	}
}

// TestBudgetStop: a turn over its budget gets a 429 in the API's shape
// that tells the SDK not to retry, no request reaches the provider, and
// the channel is told through BudgetStopped, once per refused request.
func TestBudgetStop(t *testing.T) {
	ant, oai := fakeUpstreams(t)
	stop := Budget{Limit: "turn_tokens", Detail: "@engineer stopped: 31000 tokens used in one turn (limit 30000)."}
	for _, tc := range []struct {
		kind, path, body, wantType string
		up                         Upstream
	}{
		{KindAnthropic, "/anthropic/v1/messages", `{"model":"m","max_tokens":5,"stream":true,"messages":[]}`, "rate_limit_error", ant},
		{KindOpenAI, "/openai/v1/chat/completions", `{"model":"m","messages":[]}`, "insufficient_quota", oai},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			r := newRig(t, tc.up, nil)
			r.turns.stop = stop
			status, hdr, body := r.post(t, tc.path, "bearer", turnToken, tc.body)
			typ, msg := errorShape(t, tc.kind, body)
			if status != http.StatusTooManyRequests || typ != tc.wantType || msg != stop.Detail {
				t.Errorf("over budget = %d %q %q, want 429 %q %q", status, typ, msg, tc.wantType, stop.Detail)
			}
			if hdr.Get("X-Should-Retry") != "false" {
				t.Errorf("x-should-retry = %q, want false", hdr.Get("X-Should-Retry"))
			}
			if r.tap.count() != 0 {
				t.Errorf("%d requests reached the provider", r.tap.count())
			}
			_, _, stopped := r.turns.snapshot()
			if len(stopped) != 1 || stopped[0].Limit != stop.Limit {
				t.Errorf("BudgetStopped calls = %+v, want one for %s", stopped, stop.Limit)
			}
			if calls := r.rec.all(); len(calls) != 1 || calls[0].Status != 429 || calls[0].Error != stop.Detail {
				t.Errorf("records = %+v, want the refused call", calls)
			}
		})
	}
}

type noUpstream struct{}

func (noUpstream) Upstream(context.Context, bullpen.Member) (Upstream, error) {
	return Upstream{}, bullpen.Errorf(bullpen.EUNAVAILABLE, "@engineer has no model provider")
}

// TestNoProvider: an agent without a provider gets a 503 the SDKs do not
// retry; a provider that does not answer gets a 503 they may retry, and
// neither says anything of the key or the provider's address.
func TestNoProvider(t *testing.T) {
	r := newRig(t, Upstream{}, func(c *Config) { c.Upstreams = noUpstream{} })
	status, hdr, body := r.post(t, "/anthropic/v1/messages", "x-api-key", turnToken, `{"model":"m","max_tokens":5,"messages":[]}`)
	if _, msg := errorShape(t, KindAnthropic, body); status != 503 || hdr.Get("X-Should-Retry") != "false" || !strings.Contains(msg, "no model provider") {
		t.Errorf("no provider = %d %q retry %q", status, msg, hdr.Get("X-Should-Retry"))
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // nothing listens there now
	r = newRig(t, Upstream{Kind: KindOpenAI, BaseURL: dead.URL + "/v1", APIKey: realKey, Name: "openai"}, nil)
	status, hdr, body = r.post(t, "/openai/v1/chat/completions", "bearer", turnToken, `{"model":"m","messages":[]}`)
	_, msg := errorShape(t, KindOpenAI, body)
	if status != 503 || hdr.Get("X-Should-Retry") != "" || !strings.Contains(msg, "did not answer") || strings.Contains(msg, "127.0.0.1") {
		t.Errorf("dead provider = %d %q retry %q", status, msg, hdr.Get("X-Should-Retry"))
	}
	if c := r.rec.all(); len(c) != 1 || c[0].Status != 503 || c[0].Error == "" {
		t.Errorf("record = %+v", c)
	}
}
