package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/jsonutf8"
)

// maxChecked is how much of a request body refuseBadText reads to check
// it; a longer body is passed on whole and left to the SDK's limits.
const maxChecked = 4 << 20

// invalidParams is JSON-RPC's code for bad method parameters.
const invalidParams = -32602

// refuseBadText answers a JSON-RPC error, as the REST API answers 400,
// when a message holds a string that is not valid UTF-8 or escapes a
// lone UTF-16 surrogate: decoding would turn it into U+FFFD silently, and
// a tool would store something other than what was sent. The error names
// the tool argument (or the message's field). It reports whether it
// answered; otherwise the body is left for the SDK to read, unchanged.
func refuseBadText(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxChecked))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil || len(body) == maxChecked || (utf8.Valid(body) && !bytes.Contains(body, []byte(`\u`))) {
		return false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &msg) != nil {
		if err := jsonutf8.Check(body); err != nil { // a batch, or not JSON-RPC
			writeRPCError(w, nil, bullpen.ErrorMessage(err))
			return true
		}
		return false
	}
	if msg.Method == "tools/call" && len(msg.Params.Arguments) > 0 {
		if err := jsonutf8.Check(msg.Params.Arguments); err != nil {
			writeRPCError(w, msg.ID, "tool argument "+bullpen.ErrorMessage(err)+
				"; send text as UTF-8, with any \\u escape of a surrogate as half of a pair")
			return true
		}
	}
	if err := jsonutf8.Check(trimmed); err != nil {
		writeRPCError(w, msg.ID, bullpen.ErrorMessage(err))
		return true
	}
	return false
}

// writeRPCError answers one JSON-RPC error response for id.
func writeRPCError(w http.ResponseWriter, id json.RawMessage, message string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": invalidParams, "message": strings.TrimSpace(message)}})
}
