package anthropic

import "encoding/json"

// The Messages API wire format, only the fields this provider sends and
// reads. Field order is the order on the wire.

// Version is the anthropic-version header sent with every request.
const Version = "2023-06-01"

type messagesRequest struct {
	Model       string    `json:"model"`
	MaxTokens   int       `json:"max_tokens"`
	System      []block   `json:"system,omitempty"`
	Tools       []toolDef `json:"tools,omitempty"`
	Messages    []turn    `json:"messages"`
	Temperature *float64  `json:"temperature,omitempty"`
	Stream      bool      `json:"stream"`
}

type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

type toolDef struct {
	Name         string                     `json:"name"`
	Description  string                     `json:"description,omitempty"`
	InputSchema  map[string]json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl              `json:"cache_control,omitempty"`
}

type turn struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is a content block of any type this provider sends: text,
// tool_use or tool_result. Unused fields are omitted.
type block struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      []block         `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

// event is one streamed event's data; which fields are set depends on
// Type.
type event struct {
	Type         string      `json:"type"`
	Message      *startMsg   `json:"message"`
	Index        int         `json:"index"`
	ContentBlock *startBlock `json:"content_block"`
	Delta        *delta      `json:"delta"`
	Usage        *usage      `json:"usage"`
	Error        *apiError   `json:"error"`
}

type startMsg struct {
	Model string `json:"model"`
	Usage usage  `json:"usage"`
}

type startBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type delta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}

// usage has pointers because message_delta omits the counts that did not
// change, and an omitted count keeps message_start's.
type usage struct {
	InputTokens              *int `json:"input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
}

type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}
