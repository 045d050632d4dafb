// Package providers builds the model providers an office runs on from its
// configuration. It sits above llm and its adapters (openai, anthropic,
// scripted), which import llm, so llm itself cannot build them.
package providers

import (
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/anthropic"
	"github.com/bullpen-hq/bullpen/agents/llm/openai"
)

// Default models when the environment names none.
const (
	DefaultOpenAIModel    = "gpt-4o-mini"
	DefaultAnthropicModel = "claude-sonnet-4-5"
)

// FromEnv configures model providers through getenv (os.Getenv in the
// server, a map in tests):
//
//	BULLPEN_OPENAI_API_KEY, BULLPEN_OPENAI_BASE_URL, BULLPEN_OPENAI_MODEL
//	BULLPEN_ANTHROPIC_API_KEY, BULLPEN_ANTHROPIC_BASE_URL, BULLPEN_ANTHROPIC_MODEL
//	BULLPEN_PROVIDER: the default for roles that name none
//
// OpenAI-compatible servers without keys (Ollama, vLLM) need only the
// base URL. Without BULLPEN_PROVIDER the default is anthropic, then
// openai, whichever is configured.
func FromEnv(getenv func(string) string) (map[string]llm.Provider, string) {
	ps := map[string]llm.Provider{}
	if key, base := getenv("BULLPEN_OPENAI_API_KEY"), getenv("BULLPEN_OPENAI_BASE_URL"); key != "" || base != "" {
		ps["openai"] = openai.New(openai.Config{APIKey: key, BaseURL: base,
			Model: or(getenv("BULLPEN_OPENAI_MODEL"), DefaultOpenAIModel)})
	}
	if key := getenv("BULLPEN_ANTHROPIC_API_KEY"); key != "" {
		ps["anthropic"] = anthropic.New(anthropic.Config{APIKey: key, BaseURL: getenv("BULLPEN_ANTHROPIC_BASE_URL"),
			Model: or(getenv("BULLPEN_ANTHROPIC_MODEL"), DefaultAnthropicModel)})
	}
	def := getenv("BULLPEN_PROVIDER")
	if def == "" {
		for _, k := range []string{"anthropic", "openai"} {
			if ps[k] != nil {
				def = k
				break
			}
		}
	}
	return ps, def
}

// Simulation runs every provider name a role may ask for on one scripted
// model, so a demo never reaches a real one; "scripted" is the default.
func Simulation(sim llm.Provider) (map[string]llm.Provider, string) {
	return map[string]llm.Provider{"scripted": sim, "openai": sim, "anthropic": sim}, "scripted"
}

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
