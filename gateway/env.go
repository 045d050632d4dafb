package gateway

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
