package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// server builds the MCP server of one request, for the caller that
// ServeHTTP authenticated: it lists only the caller's tools, and every
// call runs as the caller, never as anyone its arguments name.
func (h *handler) server(r *http.Request) *sdk.Server {
	c, _ := r.Context().Value(callerKey{}).(*caller)
	if c == nil {
		return nil // not reached: ServeHTTP authenticates first
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "bullpen", Title: "Bullpen office", Version: h.deps.Version},
		&sdk.ServerOptions{Instructions: instructions(c), Logger: h.sdkLog, Capabilities: capabilities})
	known := map[string]bool{}
	for _, t := range c.tools {
		known[t.Name] = true
		s.AddTool(&sdk.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters}, h.run(c))
	}
	// A call to a tool the caller was not offered still goes to the agents
	// service, which refuses it and records the refusal as a tool event,
	// as the built-in loop does; the client reads a tool error, not a
	// protocol error.
	s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if call, ok := req.(*sdk.CallToolRequest); ok && call.Params != nil && !known[call.Params.Name] {
				return h.run(c)(ctx, call)
			}
			return next(ctx, method, req)
		}
	})
	return s
}

// capabilities are the server's: tools, with no list-changed
// notifications (and no logging to the client, deprecated in 2026-07-28). A caller's tools are fixed for its request, and a client
// that may subscribe to changes (Claude Code opens "subscriptions/listen"
// at start under protocol 2026-07-28) would otherwise hold a request open
// that a JSON response can never answer: it waited 25 s before listing
// tools. Without the capability the subscription is answered at once.
var capabilities = &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}}

// run is the handler of every tool: the agents service runs the call as
// the caller, in the caller's turn.
func (h *handler) run(c *caller) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args := req.Params.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		out, err := h.deps.Tools.CallTool(agents.WithCallID(ctx, callID(req.Params.Meta)), c.member, c.turnID, req.Params.Name, args)
		if err != nil {
			if bullpen.ErrorCode(err) == bullpen.EINTERNAL {
				h.deps.Logger.Error("mcp: tool call", "tool", req.Params.Name, "agent", c.member.Handle, "err", err)
			}
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "error: " + bullpen.ErrorMessage(err)}}}, nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out}}}, nil
	}
}

// callIDKeys are the _meta keys under which clients name their model's
// tool call: Bullpen's own, and Claude Code's (seen in its 2.1.328
// binary). The id lets a repeated call return its first outcome.
var callIDKeys = []string{"bullpen/callId", "claudecode/toolUseId"}

func callID(meta sdk.Meta) string {
	for _, k := range callIDKeys {
		if id, ok := meta[k].(string); ok && id != "" {
			return id
		}
	}
	return ""
}

// instructions is the compact brief a client's model gets about the
// server: who it acts as and what the tools are for.
func instructions(c *caller) string {
	s := fmt.Sprintf("These are the tools of a Bullpen office. You act as @%s: every call is made as you, recorded, and limited to your role's tools.", c.member.Handle)
	if c.turnID != 0 {
		s += fmt.Sprintf(" This connection belongs to turn %d and stops working when the turn ends.", c.turnID)
	}
	return s
}

var _ ToolSource = (*agents.Service)(nil)
