package gateway

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

// usageReader reads the token usage out of an answer as it streams by.
type usageReader interface {
	Write(p []byte) (int, error)
	Usage() llm.Usage
	// Complete reports whether the answer's whole usage arrived: the
	// final usage event of a stream, the usage of a whole JSON body.
	Complete() bool
}

// discardUsage is the reader of calls that use no tokens.
type discardUsage struct{}

func (discardUsage) Write(p []byte) (int, error) { return len(p), nil }
func (discardUsage) Usage() llm.Usage            { return llm.Usage{} }
func (discardUsage) Complete() bool              { return true }

// maxUsageJSON bounds the non-streamed answer kept to read its usage.
const maxUsageJSON = 64 << 20

func newUsageReader(api, contentType string, reqBody []byte) usageReader {
	if strings.HasPrefix(strings.ToLower(contentType), "text/event-stream") {
		return &sseUsage{api: api, reqBody: reqBody}
	}
	return &jsonUsage{api: api}
}

// wireUsage holds the usage fields of all three APIs: Anthropic's
// input/cache/output, Chat Completions' prompt/completion, and
// Responses' input/output with input_tokens_details.
type wireUsage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheRead        int `json:"cache_read_input_tokens"`
	CacheCreation    int `json:"cache_creation_input_tokens"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	PromptDetails    struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	InputDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

// usage converts to llm.Usage, whose InputTokens counts every prompt
// token: Anthropic reports cache reads and writes apart from input_tokens,
// the OpenAI APIs include cached tokens in theirs.
func (w wireUsage) usage(api string) llm.Usage {
	switch api {
	case apiMessages:
		return llm.Usage{InputTokens: w.InputTokens + w.CacheRead + w.CacheCreation, CachedInputTokens: w.CacheRead,
			CacheWriteTokens: w.CacheCreation, OutputTokens: w.OutputTokens}
	case apiChat:
		return llm.Usage{InputTokens: w.PromptTokens, CachedInputTokens: w.PromptDetails.CachedTokens, OutputTokens: w.CompletionTokens}
	}
	return llm.Usage{InputTokens: w.InputTokens, CachedInputTokens: w.InputDetails.CachedTokens, OutputTokens: w.OutputTokens}
}

// merge takes the non-zero counts of v: Anthropic's message_delta carries
// cumulative counts, some of them only.
func (w *wireUsage) merge(v wireUsage) {
	set := func(dst *int, src int) {
		if src != 0 {
			*dst = src
		}
	}
	set(&w.InputTokens, v.InputTokens)
	set(&w.OutputTokens, v.OutputTokens)
	set(&w.CacheRead, v.CacheRead)
	set(&w.CacheCreation, v.CacheCreation)
	set(&w.PromptTokens, v.PromptTokens)
	set(&w.CompletionTokens, v.CompletionTokens)
	set(&w.PromptDetails.CachedTokens, v.PromptDetails.CachedTokens)
	set(&w.InputDetails.CachedTokens, v.InputDetails.CachedTokens)
}

// jsonUsage reads the top-level usage of a whole JSON answer.
type jsonUsage struct {
	api string
	buf bytes.Buffer
}

func (j *jsonUsage) Write(p []byte) (int, error) {
	if j.buf.Len()+len(p) <= maxUsageJSON {
		j.buf.Write(p)
	}
	return len(p), nil
}

func (j *jsonUsage) Usage() llm.Usage {
	u, _ := j.read()
	return u
}

func (j *jsonUsage) Complete() bool {
	_, ok := j.read()
	return ok
}

// read decodes the whole body's usage; false when the body is not whole
// JSON or has none.
func (j *jsonUsage) read() (llm.Usage, bool) {
	var v struct {
		Usage *wireUsage `json:"usage"`
	}
	if json.Unmarshal(j.buf.Bytes(), &v) != nil || v.Usage == nil {
		return llm.Usage{}, false
	}
	return v.Usage.usage(j.api), true
}
