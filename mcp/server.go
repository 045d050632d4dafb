package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

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
	opts := &sdk.ServerOptions{Instructions: instructions(c), Logger: h.sdkLog, Capabilities: capabilities()}
	if h.deps.Office != nil {
		opts.CompletionHandler = h.complete(c)
		opts.Capabilities.Extensions = map[string]any{tasksExt: map[string]any{}}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "bullpen", Title: "Bullpen office", Version: h.deps.Version}, opts)
	var mu sync.Mutex // guards known: a batch's calls may run at once
	known := map[string]bool{}
	for _, t := range c.tools {
		known[t.Name] = true
		s.AddTool(&sdk.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters}, h.run(c))
	}
	if h.deps.Office != nil && known[bullpen.ToolPostMessage] {
		known[askTool] = true
		s.AddTool(&sdk.Tool{Name: askTool, Title: "Ask a member", Description: askDescription, InputSchema: askSchema}, h.askSync(c))
	}
	h.addResources(s, c)
	h.addPrompts(s, c)
	if h.deps.Fixtures {
		addFixtures(s)
	}
	// A call to a tool the caller was not offered still goes to the agents
	// service, which refuses it and records the refusal as a tool event,
	// as the built-in loop does; the client reads a tool error, not a
	// protocol error.
	s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if call, ok := req.(*sdk.CallToolRequest); ok && call.Params != nil && !(h.deps.Fixtures && isFixture(call.Params.Name)) {
				mu.Lock()
				add := !known[call.Params.Name]
				known[call.Params.Name] = true
				mu.Unlock()
				if add && !validToolName(call.Params.Name) {
					return h.run(c)(ctx, call)
				}
				if add {
					// Through the SDK, so that the result is typed for the
					// client's protocol (2026-07-28 wants resultType).
					s.AddTool(&sdk.Tool{Name: call.Params.Name, InputSchema: noArgs}, h.run(c))
				}
			}
			if _, ok := req.(*sdk.ListResourcesRequest); ok && h.deps.Office != nil {
				return h.resourcesList(ctx, c, method, req, next)
			}
			return next(ctx, method, req)
		}
	})
	return s
}

// capabilities are the server's: tools, resources and prompts, with no
// list-changed or update notifications (a caller's tools are fixed for
// its request, and nothing would send them: each request has its own
// server), and no logging to the client (deprecated in 2026-07-28).
// Completion is added where the office is. A subscriptions/listen stream
// stays open and quiet until the client closes it.
// With the office, the Tasks extension is declared too (tasks.go).
func capabilities() *sdk.ServerCapabilities {
	return &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}, Resources: &sdk.ResourceCapabilities{}, Prompts: &sdk.PromptCapabilities{}}
}

// resourcesList answers resources/list with the office's resources (the
// caller's channels, the wiki's pages) after any fixed ones.
func (h *handler) resourcesList(ctx context.Context, c *caller, method string, req sdk.Request, next sdk.MethodHandler) (sdk.Result, error) {
	res, err := next(ctx, method, req)
	if err != nil {
		return res, err
	}
	list, ok := res.(*sdk.ListResourcesResult)
	if !ok || list.NextCursor != "" {
		return res, nil
	}
	office, err := h.listResources(ctx, c)
	if err != nil {
		h.deps.Logger.Error("mcp: list resources", "agent", c.member.Handle, "err", err)
		return nil, fmt.Errorf("listing resources failed")
	}
	list.Resources = append(list.Resources, office...)
	return list, nil
}

// run is the handler of every tool: the agents service runs the call as
// the caller, in the caller's turn.
func (h *handler) run(c *caller) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args := req.Params.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		stop := h.progress(ctx, req)
		out, err := h.deps.Tools.CallTool(agents.WithCallID(ctx, callID(req.Params.Meta)), c.member, c.turnID, req.Params.Name, args)
		stop()
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

// validToolName reports whether the SDK would take name as a tool's: 1 to
// 128 of A–Z, a–z, 0–9, _, - and . (it logs an error for any other).
func validToolName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}
