package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// responsesRequest is a Responses API request body (POST /responses, its
// /compact and /input_tokens), kept whole in raw so that a request
// forwarded to a Responses provider keeps every field it sent.
type responsesRequest struct {
	raw          map[string]json.RawMessage
	Model        string            `json:"model"`
	Stream       bool              `json:"stream"`
	Instructions *string           `json:"instructions"`
	Input        json.RawMessage   `json:"input"`
	PreviousID   *string           `json:"previous_response_id"`
	Tools        []json.RawMessage `json:"tools"`
	ToolChoice   json.RawMessage   `json:"tool_choice"`
	MaxOutput    *int              `json:"max_output_tokens"`
	Temperature  *float64          `json:"temperature"`
	TopP         *float64          `json:"top_p"`
	Parallel     *bool             `json:"parallel_tool_calls"`
	Store        *bool             `json:"store"`
	User         string            `json:"user"`
	Reasoning    *struct {
		Effort string `json:"effort"`
	} `json:"reasoning"`
	Text *struct {
		Format json.RawMessage `json:"format"`
	} `json:"text"`
	items []json.RawMessage // Input as items, with the previous context and summaries resolved
}

// item holds the fields of the Responses items the gateway reads.
type item struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        string          `json:"arguments"`
	Input            string          `json:"input"`
	Output           json.RawMessage `json:"output"`
	EncryptedContent *string         `json:"encrypted_content"`
}

// kind is the item's type; an item with a role and no type is a message.
func (it item) kind() string {
	if it.Type == "" && it.Role != "" {
		return "message"
	}
	return it.Type
}

// compactionPrefix starts the encrypted_content of a compaction item the
// gateway made itself (for a Chat-only provider): it is the id of the
// stored summary, resolved like a previous_response_id.
const compactionPrefix = "bpc_"

// parseResponsesRequest decodes body and checks its shape; a wrong one is
// an EINVALID error saying which field.
func parseResponsesRequest(body []byte) (*responsesRequest, error) {
	req := &responsesRequest{}
	if err := json.Unmarshal(body, &req.raw); err != nil {
		return nil, bullpen.Errorf(bullpen.EINVALID, "the request body is not a JSON object: %v", err)
	}
	if err := json.Unmarshal(body, req); err != nil {
		return nil, bullpen.Errorf(bullpen.EINVALID, "invalid request: %s", fieldProblem(err))
	}
	if req.MaxOutput != nil && *req.MaxOutput < 1 {
		return nil, bullpen.Errorf(bullpen.EINVALID, "max_output_tokens must be at least 1, got %d", *req.MaxOutput)
	}
	items, err := inputItems(req.Input)
	if err != nil {
		return nil, err
	}
	req.items = items
	return req, nil
}

// fieldProblem names the field of a JSON type error.
func fieldProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s must be %s, not a JSON %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return "a number"
}

// inputItems is the request's input as items: a string is one user
// message; an array must hold objects.
func inputItems(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, bullpen.Errorf(bullpen.EINVALID, "input: %v", err)
		}
		return []json.RawMessage{userMessage(s)}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, bullpen.Errorf(bullpen.EINVALID, "input must be a string or an array of items")
	}
	for i, it := range items {
		var v item
		if len(bytes.TrimSpace(it)) == 0 || bytes.TrimSpace(it)[0] != '{' || json.Unmarshal(it, &v) != nil {
			return nil, bullpen.Errorf(bullpen.EINVALID, "input[%d] must be an item object", i)
		}
		if v.kind() == "" {
			return nil, bullpen.Errorf(bullpen.EINVALID, "input[%d] has neither a type nor a role", i)
		}
	}
	return items, nil
}

func userMessage(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": text})
	return b
}

// resolve replaces previous_response_id by the stored conversation it
// names and each of the gateway's own compaction items by its summary.
// Both are looked up as the calling agent: another agent's id is
// refused as not found. It reports whether the input changed.
func (req *responsesRequest) resolve(ctx context.Context, store ResponseStore, agentID int64) (bool, error) {
	changed := false
	var out []json.RawMessage
	if req.PreviousID != nil && *req.PreviousID != "" {
		prev, err := store.GetResponse(ctx, agentID, *req.PreviousID)
		if bullpen.IsCode(err, bullpen.ENOTFOUND) {
			return false, bullpen.Errorf(bullpen.EINVALID, "Previous response with id '%s' not found.", *req.PreviousID)
		} else if err != nil {
			return false, fmt.Errorf("gateway: previous response: %w", err)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(prev, &items); err != nil {
			return false, fmt.Errorf("gateway: stored response %s: %w", *req.PreviousID, err)
		}
		out = append(out, replayable(items)...)
		changed = true
	}
	for _, raw := range req.items {
		var it item
		_ = json.Unmarshal(raw, &it)
		if it.kind() != "compaction" || it.EncryptedContent == nil || !strings.HasPrefix(*it.EncryptedContent, compactionPrefix) {
			out = append(out, raw)
			continue
		}
		sum, err := store.GetResponse(ctx, agentID, *it.EncryptedContent)
		if bullpen.IsCode(err, bullpen.ENOTFOUND) {
			return false, bullpen.Errorf(bullpen.EINVALID, "compaction item: no summary %q of this agent", *it.EncryptedContent)
		} else if err != nil {
			return false, fmt.Errorf("gateway: compaction summary: %w", err)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(sum, &items); err != nil {
			return false, fmt.Errorf("gateway: stored summary %s: %w", *it.EncryptedContent, err)
		}
		out = append(out, items...)
		changed = true
	}
	req.items = out
	return changed, nil
}

// replayable are stored output items as a new request's input: reasoning
// items without encrypted content are dropped and other items lose their
// ids, which a provider that did not store them would not know.
func replayable(items []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(items))
	for _, raw := range items {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		var it item
		_ = json.Unmarshal(raw, &it)
		if it.kind() == "reasoning" {
			if it.EncryptedContent == nil || *it.EncryptedContent == "" {
				continue
			}
			out = append(out, raw)
			continue
		}
		delete(m, "id")
		delete(m, "status")
		b, _ := json.Marshal(m)
		out = append(out, b)
	}
	return out
}

// nativeBody is the request for a Responses provider: as sent, or, when
// resolve changed the input, with the resolved items and without
// previous_response_id.
func (req *responsesRequest) nativeBody(orig []byte, changed bool) []byte {
	if !changed {
		return orig
	}
	m := make(map[string]json.RawMessage, len(req.raw))
	for k, v := range req.raw {
		m[k] = v
	}
	delete(m, "previous_response_id")
	items, _ := json.Marshal(req.itemsOrEmpty())
	m["input"] = items
	b, _ := json.Marshal(m)
	return b
}

func (req *responsesRequest) itemsOrEmpty() []json.RawMessage {
	if req.items == nil {
		return []json.RawMessage{}
	}
	return req.items
}
