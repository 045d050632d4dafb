package openai

import "encoding/json"

// The Chat Completions wire format, only the fields this provider sends
// and reads. Field order is the order on the wire.

type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []chatMessage  `json:"messages"`
	Tools               []chatTool     `json:"tools,omitempty"`
	MaxTokens           *int           `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int           `json:"max_completion_tokens,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a pointer because an assistant turn with tool calls and
	// no text sends none, while an empty user text is still sent.
	Content    *string        `json:"content,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string         `json:"type"`
	Function chatDefinition `json:"function"`
}

type chatDefinition struct {
	Name        string                     `json:"name"`
	Description string                     `json:"description,omitempty"`
	Parameters  map[string]json.RawMessage `json:"parameters"`
}

// chatChunk is one streamed chat.completion.chunk. Error is set instead
// when a server reports a failure inside the stream.
type chatChunk struct {
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *chatUsage   `json:"usage"`
	Error   *chatError   `json:"error"`
}

type chatChoice struct {
	Index        int       `json:"index"`
	Delta        chatDelta `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

type chatDelta struct {
	Content   string          `json:"content"`
	ToolCalls []chatCallDelta `json:"tool_calls"`
}

type chatCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string       `json:"name"`
		Arguments argsFragment `json:"arguments"`
	} `json:"function"`
}

// argsFragment is a streamed fragment of a call's arguments: a string on the
// wire, though some compatible servers send the whole object as JSON.
type argsFragment string

// UnmarshalJSON takes a string, or any other JSON value as its bytes.
func (a *argsFragment) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*a = argsFragment(s)
		return nil
	}
	if string(b) != "null" {
		*a = argsFragment(b)
	}
	return nil
}

type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
}

// chatError is OpenAI's error object; compatible servers fill parts of it.
type chatError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// UnmarshalJSON also takes the bare string some compatible servers send
// as their error.
func (e *chatError) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*e = chatError{Message: s}
		return nil
	}
	type plain chatError
	return json.Unmarshal(b, (*plain)(e))
}
