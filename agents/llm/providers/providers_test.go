package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/anthropic"
	"github.com/bullpen-hq/bullpen/agents/llm/openai"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// Which providers exist, and which is the default, follows the variables.
func TestFromEnvChoosesProviders(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string
		def  string
	}{
		{name: "none", want: nil, def: ""},
		{name: "openai base url only", env: map[string]string{"BULLPEN_OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, want: []string{"openai"}, def: "openai"},
		{name: "both prefer anthropic", env: map[string]string{"BULLPEN_OPENAI_API_KEY": "k", "BULLPEN_ANTHROPIC_API_KEY": "a"}, want: []string{"anthropic", "openai"}, def: "anthropic"},
		{name: "explicit default", env: map[string]string{"BULLPEN_OPENAI_API_KEY": "k", "BULLPEN_ANTHROPIC_API_KEY": "a", "BULLPEN_PROVIDER": "openai"}, want: []string{"anthropic", "openai"}, def: "openai"},
		{name: "anthropic base url alone is not enough", env: map[string]string{"BULLPEN_ANTHROPIC_BASE_URL": "http://127.0.0.1:1"}, want: nil, def: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, def := FromEnv(env(tt.env))
			if def != tt.def || len(ps) != len(tt.want) {
				t.Fatalf("FromEnv = %d providers, default %q; want %v, %q", len(ps), def, tt.want, tt.def)
			}
			for _, k := range tt.want {
				if ps[k] == nil {
					t.Errorf("provider %q missing", k)
				}
			}
			if _, ok := ps["openai"].(*openai.Provider); ps["openai"] != nil && !ok {
				t.Errorf("openai is a %T", ps["openai"])
			}
			if _, ok := ps["anthropic"].(*anthropic.Provider); ps["anthropic"] != nil && !ok {
				t.Errorf("anthropic is a %T", ps["anthropic"])
			}
		})
	}
}

// The model variables reach the wire, and an unset one sends the default.
func TestFromEnvModels(t *testing.T) {
	for _, tt := range []struct{ set, want string }{{"", DefaultOpenAIModel}, {"llama3", "llama3"}} {
		models := make(chan string, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body struct{ Model string }
			json.NewDecoder(r.Body).Decode(&body)
			select {
			case models <- body.Model:
			default:
			}
			http.Error(w, `{"error":{"message":"no"}}`, http.StatusBadRequest) // 400: not retried
		}))
		ps, _ := FromEnv(env(map[string]string{"BULLPEN_OPENAI_BASE_URL": srv.URL + "/v1", "BULLPEN_OPENAI_MODEL": tt.set}))
		ps["openai"].Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
		srv.Close()
		select {
		case got := <-models:
			if got != tt.want {
				t.Errorf("BULLPEN_OPENAI_MODEL=%q sent model %q, want %q", tt.set, got, tt.want)
			}
		default:
			t.Errorf("BULLPEN_OPENAI_MODEL=%q: no request reached the server", tt.set)
		}
	}
}

// The simulation answers every provider name with the one scripted model.
func TestSimulation(t *testing.T) {
	sim := scripted.New(func(llm.Request) (llm.Response, error) { return llm.Response{}, nil })
	ps, def := Simulation(sim)
	if def != "scripted" {
		t.Errorf("default = %q", def)
	}
	for _, k := range []string{"scripted", "openai", "anthropic"} {
		if ps[k] != llm.Provider(sim) {
			t.Errorf("%s = %v, want the simulation", k, ps[k])
		}
	}
}
