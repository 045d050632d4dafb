//lint:file-ignore SA1019 the conformance suite's scenarios exercise sampling, roots and the like, deprecated in 2026-07-28 but still required of a server.

package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// addInputFixtures adds the conformance suite's multi-round-trip tools
// (SEP-2322): each answers input_required with the requests the scenario
// names, then completes once the client retries with the answers.
func addInputFixtures(s *sdk.Server, tool func(string, sdk.ToolHandler)) {
	tool("test_input_required_result_elicitation", func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if name, ok := elicited(req.Params.InputResponses["user_name"], "name"); ok {
			return text("Hello, " + name + "!"), nil
		}
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"user_name": elicit("What is your name?", "name")}}, nil
	})
	tool("test_streaming_elicitation", func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if name, ok := elicited(req.Params.InputResponses["user_name"], "name"); ok {
			return text("Hello, " + name + "!"), nil
		}
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"user_name": elicit("What is your name?", "name")}}, nil
	})
	tool("test_input_required_result_sampling", func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["capital_question"].(*sdk.CreateMessageWithToolsResult); ok {
			return text("The model said: " + sampledText(r)), nil
		}
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"capital_question": sample("What is the capital of France?", 100)}}, nil
	})
	tool("test_input_required_result_list_roots", func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["client_roots"].(*sdk.ListRootsResult); ok {
			var uris []string
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			return text("Roots: " + strings.Join(uris, ", ")), nil
		}
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"client_roots": &sdk.ListRootsParams{}}}, nil
	})
	confirm := &sdk.ElicitParams{Message: "Please confirm", RequestedSchema: map[string]any{"type": "object",
		"properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []string{"ok"}}}
	tool("test_input_required_result_request_state", func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if req.Params.RequestState != "" {
			st, err := checkState(req.Params.RequestState)
			if err != nil {
				return nil, err
			}
			if _, ok := req.Params.InputResponses["confirm"]; ok && st == "confirm" {
				return text("state-ok: confirmed"), nil
			}
		}
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"confirm": confirm}, RequestState: signState("confirm")}, nil
	})
	tool("test_input_required_result_tampered_state", func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if req.Params.RequestState != "" {
			if _, err := checkState(req.Params.RequestState); err != nil {
				return nil, err
			}
			if _, ok := req.Params.InputResponses["confirm"]; ok {
				return text("state-ok"), nil
			}
		}
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"confirm": confirm}, RequestState: signState("tamper-check")}, nil
	})
	tool("test_input_required_result_multiple_inputs", func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		all := sdk.InputRequestMap{"user_name": elicit("What is your name?", "name"), "greeting": sample("Generate a greeting", 50), "client_roots": &sdk.ListRootsParams{}}
		in := req.Params.InputResponses
		if req.Params.RequestState != "" {
			if _, err := checkState(req.Params.RequestState); err != nil {
				return nil, err
			}
			missing := sdk.InputRequestMap{}
			for k, v := range all {
				if in[k] == nil {
					missing[k] = v
				}
			}
			if len(missing) == 0 {
				return text("All inputs received."), nil
			}
			all = missing
		}
		return &sdk.CallToolResult{InputRequests: all, RequestState: signState("multiple")}, nil
	})
	tool("test_input_required_result_multi_round", func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		round := ""
		if req.Params.RequestState != "" {
			st, err := checkState(req.Params.RequestState)
			if err != nil {
				return nil, err
			}
			round = st
		}
		in := req.Params.InputResponses
		switch {
		case round == "round-2" && in["step2"] != nil:
			color, _ := elicited(in["step2"], "color")
			return text("Done: favorite color " + color), nil
		case round == "round-1" && in["step1"] != nil, round == "round-2":
			return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"step2": elicit("Step 2: What is your favorite color?", "color")}, RequestState: signState("round-2")}, nil
		}
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"step1": elicit("Step 1: What is your name?", "name")}, RequestState: signState("round-1")}, nil
	})
	tool("test_input_required_result_capabilities", func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if len(req.Params.InputResponses) > 0 {
			return text("Received the declared inputs."), nil
		}
		caps := req.ClientCapabilities()
		want := sdk.InputRequestMap{}
		if caps != nil && caps.Sampling != nil {
			want["greeting"] = sample("Generate a greeting", 50)
		}
		if caps != nil && caps.Elicitation != nil {
			want["user_name"] = elicit("What is your name?", "name")
		}
		if len(want) == 0 {
			return text("The client declared neither sampling nor elicitation."), nil
		}
		return &sdk.CallToolResult{InputRequests: want}, nil
	})
}

func sampledText(r *sdk.CreateMessageWithToolsResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	if b.Len() == 0 {
		return fmt.Sprintf("(%d content blocks)", len(r.Content))
	}
	return b.String()
}
