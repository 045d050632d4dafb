//lint:file-ignore SA1019 the conformance suite's scenarios exercise sampling, roots and the like, deprecated in 2026-07-28 but still required of a server.

package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP conformance suite's fixtures: the tools, resources and prompts
// its scenarios call by name (test_*, test://…), with the answers the
// scenarios' descriptions spell out. They exist only so that the suite
// can exercise the protocol machinery (content types, progress,
// multi-round-trip input, capability checks) on this server; Deps.Fixtures
// turns them on, for TestMCPConformance only (bullpen serve
// --mcp-conformance). They touch nothing of the office.

// pngPixel is a 1×1 red PNG; wavSilence a WAV file of one silent sample.
var (
	pngPixel   = mustB64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	wavSilence = mustB64("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==")
)

func mustB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func isFixture(name string) bool {
	return strings.HasPrefix(name, "test_") || name == "json_schema_2020_12_tool"
}

var noArgs = json.RawMessage(`{"type":"object","properties":{}}`)

// stateKey signs the fixtures' requestState (one per process: the suite
// talks to one server).
var stateKey = func() []byte { k := make([]byte, 32); rand.Read(k); return k }()

func signState(s string) string {
	m := hmac.New(sha256.New, stateKey)
	m.Write([]byte(s))
	return base64.RawURLEncoding.EncodeToString([]byte(s)) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkState returns the signed state's payload, or an invalid-params
// error if it was changed.
func checkState(signed string) (string, error) {
	p, sig, ok := strings.Cut(signed, ".")
	raw, err1 := base64.RawURLEncoding.DecodeString(p)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	m := hmac.New(sha256.New, stateKey)
	m.Write(raw)
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(mac, m.Sum(nil)) {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState failed its integrity check"}
	}
	return string(raw), nil
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func elicit(msg, field string) *sdk.ElicitParams {
	return &sdk.ElicitParams{Message: msg, RequestedSchema: map[string]any{"type": "object",
		"properties": map[string]any{field: map[string]any{"type": "string"}}, "required": []string{field}}}
}

func sample(prompt string, max int64) *sdk.CreateMessageParams {
	return &sdk.CreateMessageParams{MaxTokens: max, Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: prompt}}}}
}

// elicited is the named field of an accepted elicitation answer.
func elicited(r sdk.InputResponse, field string) (string, bool) {
	e, ok := r.(*sdk.ElicitResult)
	if !ok || e.Action != "accept" {
		return "", false
	}
	v, ok := e.Content[field]
	return fmt.Sprint(v), ok
}

func addFixtures(s *sdk.Server) {
	tool := func(name string, h sdk.ToolHandler) {
		s.AddTool(&sdk.Tool{Name: name, Description: "Conformance fixture " + name, InputSchema: noArgs}, h)
	}
	tool("test_simple_text", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text("This is a simple text response for testing."), nil
	})
	tool("test_image_content", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: pngPixel, MIMEType: "image/png"}}}, nil
	})
	tool("test_audio_content", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.AudioContent{Data: wavSilence, MIMEType: "audio/wav"}}}, nil
	})
	tool("test_embedded_resource", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{
			URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}}}, nil
	})
	tool("test_multiple_content_types", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Multiple content types test:"},
			&sdk.ImageContent{Data: pngPixel, MIMEType: "image/png"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}}}}, nil
	})
	tool("test_error_handling", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		r := text("This tool intentionally returns an error for testing")
		r.IsError = true
		return r, nil
	})
	tool("test_tool_with_progress", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		token := req.Params.GetProgressToken()
		for i, p := range []float64{0, 50, 100} {
			if i > 0 {
				time.Sleep(50 * time.Millisecond)
			}
			if token != nil {
				req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: 100})
			}
		}
		return text("Progress tool finished."), nil
	})
	tool("test_missing_capability", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if caps := req.ClientCapabilities(); caps == nil || caps.Sampling == nil {
			data, _ := json.Marshal(sdk.MissingRequiredClientCapabilityData{RequiredCapabilities: &sdk.ClientCapabilities{Sampling: &sdk.SamplingCapabilities{}}})
			return nil, &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities, Message: "this tool needs the client's sampling capability", Data: data}
		}
		return text("The client declared sampling."), nil
	})
	s.AddTool(&sdk.Tool{Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features", InputSchema: json.RawMessage(schema2020)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("ok"), nil })
	tool("test_logging_tool", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text("Logged nothing: the request asked for no log level."), nil
	})
	s.AddTool(&sdk.Tool{Name: "test_custom_headers", Description: "Conformance fixture with a parameter mirrored in a header",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("ok"), nil })
	addInputFixtures(s, tool)

	s.AddResource(&sdk.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://static-text", MIMEType: "text/plain", Text: "This is the content of the static text resource."}}}, nil
		})
	s.AddResource(&sdk.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource", MIMEType: "image/png"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://static-binary", MIMEType: "image/png", Blob: pngPixel}}}, nil
		})
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", Description: "A resource template", MIMEType: "application/json"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "test://template/"), "/data")
			body, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(body)}}}, nil
		})

	prompt := func(p *sdk.Prompt, msgs func(map[string]string) []*sdk.PromptMessage) {
		s.AddPrompt(p, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: msgs(req.Params.Arguments)}, nil
		})
	}
	user := func(c sdk.Content) *sdk.PromptMessage { return &sdk.PromptMessage{Role: "user", Content: c} }
	prompt(&sdk.Prompt{Name: "test_simple_prompt", Description: "A simple prompt"}, func(map[string]string) []*sdk.PromptMessage {
		return []*sdk.PromptMessage{user(&sdk.TextContent{Text: "This is a simple prompt for testing."})}
	})
	prompt(&sdk.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with arguments",
		Arguments: []*sdk.PromptArgument{{Name: "arg1", Description: "First test argument", Required: true}, {Name: "arg2", Description: "Second test argument", Required: true}}},
		func(a map[string]string) []*sdk.PromptMessage {
			return []*sdk.PromptMessage{user(&sdk.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])})}
		})
	prompt(&sdk.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt with an embedded resource",
		Arguments: []*sdk.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(a map[string]string) []*sdk.PromptMessage {
			return []*sdk.PromptMessage{user(&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: a["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
				user(&sdk.TextContent{Text: "Please process the embedded resource above."})}
		})
	prompt(&sdk.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"}, func(map[string]string) []*sdk.PromptMessage {
		return []*sdk.PromptMessage{user(&sdk.ImageContent{Data: pngPixel, MIMEType: "image/png"}), user(&sdk.TextContent{Text: "Please analyze the image above."})}
	})
	s.AddPrompt(&sdk.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks the client for context first"},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			if v, ok := elicited(req.Params.InputResponses["user_context"], "context"); ok {
				return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{user(&sdk.TextContent{Text: "Context: " + v})}}, nil
			}
			return &sdk.GetPromptResult{InputRequests: sdk.InputRequestMap{"user_context": elicit("What context should the prompt use?", "context")}}, nil
		})
}

const schema2020 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},
"phone":{"type":"string"},"email":{"type":"string"}},
"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},
"additionalProperties":false}`
