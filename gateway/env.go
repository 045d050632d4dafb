package gateway

import (
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// Default base URLs of the providers, as their SDKs take them.
const (
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
)

// UpstreamsFromEnv reads the providers' credentials through getenv
// (os.Getenv in the server), by kind, with the same variables as the
// built-in providers plus the Claude subscription token:
//
//	BULLPEN_ANTHROPIC_API_KEY, BULLPEN_ANTHROPIC_OAUTH_TOKEN (from `claude setup-token`),
//	BULLPEN_ANTHROPIC_BASE_URL, BULLPEN_ANTHROPIC_MODEL
//	BULLPEN_OPENAI_API_KEY, BULLPEN_OPENAI_BASE_URL, BULLPEN_OPENAI_MODEL
//
// A kind is present when it has a credential (or, for OpenAI-compatible
// servers without keys, a base URL). These values stay in the server
// process: the CLIs in the sandboxes get only their per-turn token.
func UpstreamsFromEnv(getenv func(string) string) map[string]Upstream {
	out := map[string]Upstream{}
	key, oauth := getenv("BULLPEN_ANTHROPIC_API_KEY"), getenv("BULLPEN_ANTHROPIC_OAUTH_TOKEN")
	if key != "" || oauth != "" {
		out[KindAnthropic] = Upstream{Kind: KindAnthropic, BaseURL: or(getenv("BULLPEN_ANTHROPIC_BASE_URL"), DefaultAnthropicBaseURL),
			APIKey: key, OAuthToken: oauth, Model: getenv("BULLPEN_ANTHROPIC_MODEL"), Name: KindAnthropic}
	}
	if key, base := getenv("BULLPEN_OPENAI_API_KEY"), getenv("BULLPEN_OPENAI_BASE_URL"); key != "" || base != "" {
		out[KindOpenAI] = Upstream{Kind: KindOpenAI, BaseURL: or(base, DefaultOpenAIBaseURL), APIKey: key,
			Model: getenv("BULLPEN_OPENAI_MODEL"), Name: KindOpenAI}
	}
	return out
}

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// TimeoutsOf takes the model-call timeouts of the office's settings
// (agents.TimeoutsFromEnv: BULLPEN_MODEL_CONNECT_TIMEOUT,
// BULLPEN_MODEL_FIRST_BYTE_TIMEOUT, BULLPEN_MODEL_IDLE_TIMEOUT) for
// Config.Timeouts, so calls through the gateway wait as long as built-in
// ones.
func TimeoutsOf(t bullpen.Timeouts) llm.Timeouts {
	return llm.Timeouts{Connect: time.Duration(t.Connect), FirstByte: time.Duration(t.FirstByte), Idle: time.Duration(t.Idle)}
}
