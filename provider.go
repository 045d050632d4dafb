package bullpen

import "time"

// Provider kinds: the two wire protocols Bullpen speaks to models.
// ProviderOpenAI covers every OpenAI-compatible server (OpenAI, Ollama,
// vLLM, LiteLLM, OpenRouter …).
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// Provider sources: a row seeded from the environment and not edited
// since, or one set up (or edited) in Settings.
const (
	ProviderFromEnv      = "env"
	ProviderFromSettings = "settings"
)

// Provider is a model endpoint set up for the office. Its secrets never
// leave the server: JSON carries only their hints.
type Provider struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Kind    string `json:"kind"` // ProviderOpenAI or ProviderAnthropic
	BaseURL string `json:"base_url"`
	// Model is the default model of agents that name none.
	Model string `json:"model"`
	// EmbeddingsModel, on an OpenAI-compatible provider, is the model its
	// /embeddings endpoint runs for the memory of the agents on it; empty
	// means none: their memory is recalled by full text alone.
	EmbeddingsModel string `json:"embeddings_model"`
	IsDefault       bool   `json:"is_default"`
	// Source is ProviderFromEnv or ProviderFromSettings.
	Source string `json:"source"`
	// APIKey and OAuthToken are the secrets; OAuthToken (Anthropic only)
	// is a Claude subscription token from `claude setup-token`.
	APIKey         string    `json:"-"`
	OAuthToken     string    `json:"-"`
	APIKeyHint     string    `json:"api_key_hint"`
	OAuthTokenHint string    `json:"oauth_token_hint"`
	Version        int64     `json:"version"` // grows on every change
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// ProviderInput adds a provider, or edits one (nil fields stay). An empty
// APIKey or OAuthToken on an edit keeps the stored secret; ClearOAuthToken
// removes it.
type ProviderInput struct {
	Name            *string `json:"name"`
	Kind            *string `json:"kind"`
	BaseURL         *string `json:"base_url"`
	APIKey          *string `json:"api_key"`
	OAuthToken      *string `json:"oauth_token"`
	ClearOAuthToken bool    `json:"clear_oauth_token"`
	Model           *string `json:"model"`
	EmbeddingsModel *string `json:"embeddings_model"`
	IsDefault       *bool   `json:"is_default"`
}

// ProviderTest is the outcome of a provider's "test connection": the
// provider's own answer or its error text.
type ProviderTest struct {
	OK        bool   `json:"ok"`
	Message   string `json:"message"`
	Model     string `json:"model,omitempty"`
	LatencyMS int64  `json:"latency_ms"`
}

// SecretHint is how a secret is shown: its last four characters.
func SecretHint(s string) string {
	if s == "" {
		return ""
	}
	r := []rune(s)
	if len(r) <= 8 {
		return "…"
	}
	return "…" + string(r[len(r)-4:])
}

// MaxProviderName bounds a provider's name.
const MaxProviderName = 40

// ValidateProviderName checks a provider's name: lower-case letters,
// digits, '.', '_' and '-', starting with a letter or digit.
func ValidateProviderName(name string) error {
	if name == "" || len(name) > MaxProviderName {
		return FieldErrorf("name", EINVALID, "provider name must be 1-%d characters", MaxProviderName)
	}
	for i, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '.' || c == '_' || c == '-')
		if !ok {
			return FieldErrorf("name", EINVALID, "provider name %q: use lower-case letters, digits, '.', '_' and '-' (starting with a letter or digit)", name)
		}
	}
	return nil
}
