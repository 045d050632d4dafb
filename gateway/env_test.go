package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

func TestUpstreamsFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want map[string]Upstream
	}{
		{"nothing", map[string]string{}, map[string]Upstream{}},
		{"subscription token only", map[string]string{"BULLPEN_ANTHROPIC_OAUTH_TOKEN": realOAuth},
			map[string]Upstream{KindAnthropic: {Kind: KindAnthropic, BaseURL: DefaultAnthropicBaseURL, OAuthToken: realOAuth, Name: "anthropic"}}},
		{"both", map[string]string{"BULLPEN_ANTHROPIC_API_KEY": "a", "BULLPEN_ANTHROPIC_MODEL": "m", "BULLPEN_OPENAI_API_KEY": "o"},
			map[string]Upstream{KindAnthropic: {Kind: KindAnthropic, BaseURL: DefaultAnthropicBaseURL, APIKey: "a", Model: "m", Name: "anthropic"},
				KindOpenAI: {Kind: KindOpenAI, BaseURL: DefaultOpenAIBaseURL, APIKey: "o", Name: "openai"}}},
		{"keyless openai-compatible", map[string]string{"BULLPEN_OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"},
			map[string]Upstream{KindOpenAI: {Kind: KindOpenAI, BaseURL: "http://127.0.0.1:11434/v1", Name: "openai"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := UpstreamsFromEnv(func(k string) string { return tt.env[k] })
			if len(got) != len(tt.want) {
				t.Fatalf("UpstreamsFromEnv = %+v, want %+v", got, tt.want)
			}
			for k, w := range tt.want {
				if got[k] != w {
					t.Errorf("UpstreamsFromEnv[%s] = %+v, want %+v", k, got[k], w)
				}
			}
		})
	}
}

// TestFreeCalls: token counting and the model list are forwarded with the
// real key and neither budgeted nor counted.
func TestFreeCalls(t *testing.T) {
	ant, _ := fakeUpstreams(t)
	r := newRig(t, ant, nil)
	r.turns.stop = Budget{Limit: "turn_tokens", Detail: "spent"}
	status, _, body := r.post(t, "/anthropic/v1/messages/count_tokens?beta=true", "x-api-key", turnToken,
		`{"model":"m","messages":[{"role":"user","content":"count these words"}]}`)
	if status != 200 || !strings.Contains(string(body), `"input_tokens"`) {
		t.Errorf("count_tokens = %d %s", status, body)
	}
	if u, adds, stopped := r.turns.snapshot(); adds != 0 || len(stopped) != 0 {
		t.Errorf("count_tokens counted %+v or stopped %v", u, stopped)
	}
	models := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/models" || req.Header.Get("Authorization") != "Bearer "+realKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"object":"list","data":[{"id":"gpt-test","object":"model"}]}`))
	}))
	t.Cleanup(models.Close)
	r = newRig(t, Upstream{Kind: KindOpenAI, BaseURL: models.URL + "/v1", APIKey: realKey}, nil)
	req, _ := http.NewRequest(http.MethodGet, r.srv.URL+"/openai/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+turnToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET models = %d", resp.StatusCode)
	}
}

// TestEndedTurn: a token whose turn has ended is refused before anything
// is forwarded, even if the authenticator still knew it.
func TestEndedTurn(t *testing.T) {
	_, oai := fakeUpstreams(t)
	r := newRig(t, oai, func(c *Config) { c.Auth = endedAuth{} })
	status, _, body := r.post(t, "/openai/v1/chat/completions", "bearer", turnToken, `{"model":"m","messages":[]}`)
	if typ, _ := errorShape(t, KindOpenAI, body); status != 403 || typ != "invalid_request_error" || r.tap.count() != 0 {
		t.Errorf("ended turn = %d %s, %d forwarded", status, body, r.tap.count())
	}
	status, _, _ = r.post(t, "/openai/v1/nope", "bearer", turnToken, `{}`)
	if status != 404 {
		t.Errorf("unknown path = %d, want 404", status)
	}
}

func TestTimeoutsOf(t *testing.T) {
	got := TimeoutsOf(bullpen.Timeouts{Connect: bullpen.Duration(time.Second), FirstByte: bullpen.Duration(2 * time.Second),
		Idle: bullpen.Duration(3 * time.Second), Turn: bullpen.Duration(time.Hour)})
	if want := (llm.Timeouts{Connect: time.Second, FirstByte: 2 * time.Second, Idle: 3 * time.Second}); got != want {
		t.Errorf("TimeoutsOf = %+v, want %+v", got, want)
	}
}
