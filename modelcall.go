package bullpen

import "time"

// Ways a model call reached the provider.
const (
	ViaBuiltin = "builtin" // the built-in turn loop called the provider
	ViaGateway = "gateway" // an agent CLI called it through Bullpen's model gateway
)

// ModelCall is one request to a model and its response, stored with its
// turn for the turn inspector: the bodies byte for byte as sent and
// received, up to a size cap (what was cut is marked as cut).
type ModelCall struct {
	ID       int64  `json:"id"`
	TurnID   int64  `json:"turn_id"`
	AgentID  int64  `json:"agent_id"`
	Seq      int    `json:"seq"` // order within the turn, from 1
	Via      string `json:"via"` // ViaBuiltin or ViaGateway
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Method   string `json:"method"`
	URL      string `json:"url"` // the provider endpoint, without credentials
	// Simulated marks a call of the scripted simulation: no model was
	// asked, and Request is the JSON of the request the loop built.
	Simulated bool `json:"simulated,omitempty"`

	Request           string `json:"request"`       // body as sent, up to the cap
	RequestBytes      int    `json:"request_bytes"` // its whole size
	RequestTruncated  bool   `json:"request_truncated"`
	Response          string `json:"response"` // body as received (SSE included), up to the cap
	ResponseBytes     int    `json:"response_bytes"`
	ResponseTruncated bool   `json:"response_truncated"`
	Status            int    `json:"status"` // HTTP status; 0 when no answer came
	Error             string `json:"error,omitempty"`

	InputTokens       int `json:"input_tokens"`
	CachedInputTokens int `json:"cached_input_tokens"`
	CacheWriteTokens  int `json:"cache_write_tokens"`
	OutputTokens      int `json:"output_tokens"`

	StartedAt  time.Time `json:"started_at"`
	DurationMS int64     `json:"duration_ms"`
}
