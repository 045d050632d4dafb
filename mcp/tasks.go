package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Tasks extension (io.modelcontextprotocol/tasks, SEP-2663) for
// ask_agent. The pinned SDK does not know it, so its wire is served here,
// before the SDK: tools/call of ask_agent from a client that declared the
// extension answers with a task (resultType "task"), and tasks/get,
// tasks/update and tasks/cancel read or change it. A task is a question
// in a thread (ask.go): every answer is read from the database.
const tasksExt = "io.modelcontextprotocol/tasks"

// maxTaskBody bounds the body read to look for a task request; a larger
// one goes to the SDK untouched (none of these requests is that big).
const maxTaskBody = 64 << 10

// rpcRequest is one JSON-RPC request, as far as the tasks wire reads it.
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Meta      map[string]json.RawMessage `json:"_meta"`
		Name      string                     `json:"name"`
		Arguments json.RawMessage            `json:"arguments"`
		TaskID    string                     `json:"taskId"`
	} `json:"params"`
}

// serveTasks answers the request if it belongs to the tasks wire, and
// reports whether it did; otherwise the body is left for the SDK.
func (h *handler) serveTasks(w http.ResponseWriter, r *http.Request, c *caller) bool {
	if h.deps.Office == nil || r.Method != http.MethodPost || r.Body == nil {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxTaskBody+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil || len(body) > maxTaskBody {
		return false
	}
	var req rpcRequest
	if json.Unmarshal(body, &req) != nil || req.JSONRPC != "2.0" || len(req.ID) == 0 {
		return false // a batch, a notification or bad JSON: the SDK answers
	}
	switch req.Method {
	case "tasks/get", "tasks/update", "tasks/cancel":
	case "tools/call":
		if req.Params.Name != askTool || !declaresTasks(req.Params.Meta) || !c.may(bullpen.ToolPostMessage) {
			return false
		}
	default:
		return false
	}
	if msg := headerMismatch(r.Header, req); msg != "" {
		writeRPC(w, req.ID, nil, &jsonrpc.Error{Code: sdk.CodeHeaderMismatch, Message: msg})
		return true
	}
	if req.Method == "tools/call" {
		h.createTask(w, r.Context(), c, req)
		return true
	}
	if !declaresTasks(req.Params.Meta) {
		data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExt: map[string]any{}}}})
		writeRPC(w, req.ID, nil, &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities, Message: req.Method + " needs the " + tasksExt + " extension in _meta's clientCapabilities", Data: data})
		return true
	}
	st, err := h.askStatus(r.Context(), c, req.Params.TaskID)
	if err != nil {
		h.taskError(w, req.ID, err)
		return true
	}
	switch req.Method {
	case "tasks/get":
		writeRPC(w, req.ID, detailedTask(st), nil)
	case "tasks/update": // ask_agent never asks the client for input
		writeRPC(w, req.ID, map[string]any{"resultType": "complete"}, nil)
	case "tasks/cancel":
		if err := h.cancelAsk(r.Context(), c, st); err != nil {
			h.taskError(w, req.ID, err)
			return true
		}
		writeRPC(w, req.ID, map[string]any{"resultType": "complete"}, nil)
	}
	return true
}

// createTask asks, and answers with the task once the question is
// stored: a tasks/get right after it finds the task on any replica.
func (h *handler) createTask(w http.ResponseWriter, ctx context.Context, c *caller, req rpcRequest) {
	root, err := h.ask(ctx, c, req.Params.Arguments)
	if err != nil {
		if code := bullpen.ErrorCode(err); code == bullpen.EINTERNAL {
			h.taskError(w, req.ID, err)
			return
		}
		// The tool ran and refused: a tool error, as for any tool.
		writeRPC(w, req.ID, map[string]any{"resultType": "complete", "isError": true,
			"content": []map[string]string{{"type": "text", "text": "error: " + bullpen.ErrorMessage(err)}}}, nil)
		return
	}
	st := askState{ID: taskPrefix + strconv.FormatInt(root.ID, 10), Status: "working", Created: root.CreatedAt, Updated: root.CreatedAt}
	res := taskFields(st)
	res["resultType"] = "task"
	writeRPC(w, req.ID, res, nil)
}

// headerMismatch checks the headers that mirror the body, as the SDK does
// for its own methods under 2026-07-28 (SEP-2243, SEP-2575): the
// protocol version must match _meta's, Mcp-Method the method, and
// Mcp-Name the tool's name or the task's id. It returns why not, or "".
func headerMismatch(h http.Header, req rpcRequest) string {
	var version string
	json.Unmarshal(req.Params.Meta[sdk.MetaKeyProtocolVersion], &version)
	name := req.Params.TaskID
	if req.Method == "tools/call" {
		name = req.Params.Name
	}
	switch {
	case h.Get("Mcp-Protocol-Version") != version:
		return "Mcp-Protocol-Version header " + strconv.Quote(h.Get("Mcp-Protocol-Version")) + " does not match _meta's protocol version " + strconv.Quote(version)
	case h.Get("Mcp-Method") != req.Method:
		return "Mcp-Method header " + strconv.Quote(h.Get("Mcp-Method")) + " does not match the method " + strconv.Quote(req.Method)
	case h.Get("Mcp-Name") != name:
		return "Mcp-Name header " + strconv.Quote(h.Get("Mcp-Name")) + " does not match " + strconv.Quote(name)
	}
	return ""
}

func taskFields(st askState) map[string]any {
	return map[string]any{"taskId": st.ID, "status": st.Status,
		"createdAt": st.Created.UTC().Format(time.RFC3339Nano), "lastUpdatedAt": st.Updated.UTC().Format(time.RFC3339Nano),
		"ttlMs": askTTL.Milliseconds(), "pollIntervalMs": askPoll.Milliseconds()}
}

// detailedTask is tasks/get's answer: the task, with the result inlined
// once it completed.
func detailedTask(st askState) map[string]any {
	res := taskFields(st)
	res["resultType"] = "complete"
	if st.Status == "completed" {
		res["result"] = map[string]any{"content": []map[string]string{{"type": "text", "text": strings.Join(st.Answer, "\n\n")}}}
	}
	return res
}

func declaresTasks(meta map[string]json.RawMessage) bool {
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(meta[sdk.MetaKeyClientCapabilities], &caps) != nil {
		return false
	}
	_, ok := caps.Extensions[tasksExt]
	return ok
}

// taskError answers an unknown task with invalid params (as the
// extension says) and anything else as an internal error, logged.
func (h *handler) taskError(w http.ResponseWriter, id json.RawMessage, err error) {
	switch bullpen.ErrorCode(err) {
	case bullpen.ENOTFOUND, bullpen.EFORBIDDEN, bullpen.EINVALID:
		writeRPC(w, id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: bullpen.ErrorMessage(err)})
		return
	}
	h.deps.Logger.Error("mcp: task", "err", err)
	writeRPC(w, id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"})
}

// writeRPC writes one JSON-RPC response; errors get the HTTP status
// SEP-2575 gives them.
func writeRPC(w http.ResponseWriter, id json.RawMessage, result any, rpcErr *jsonrpc.Error) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	status := http.StatusOK
	if rpcErr != nil {
		msg["error"] = rpcErr
		switch rpcErr.Code {
		case jsonrpc.CodeMethodNotFound:
			status = http.StatusNotFound
		case jsonrpc.CodeInvalidParams, sdk.CodeMissingRequiredClientCapabilities, sdk.CodeHeaderMismatch:
			status = http.StatusBadRequest
		}
	} else {
		msg["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(msg)
}
