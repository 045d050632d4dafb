package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/mcp"
	"github.com/bullpen-hq/bullpen/wiki"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// officeServer serves the endpoint with the office behind it (resources,
// prompts, completion, ask_agent) to @tester, who may post and read.
func officeServer(t *testing.T) (*testOffice, string) {
	t.Helper()
	o := openAgents(t, []string{bullpen.ToolPostMessage, bullpen.ToolReadChannel})
	w := wiki.New(o.db, wiki.Config{})
	if _, err := w.WritePage(context.Background(), o.admin, "Release plan", "Ship on Friday.", 0); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(mcp.New(mcp.Deps{Auth: o.off, Tools: o.svc, Office: o.off, Wiki: w, Turns: o.svc, Logger: quiet, AskWait: time.Second}))
	t.Cleanup(ts.Close)
	return o, ts.URL
}

func connect(t *testing.T, url, token, version string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "office-test", Version: "0"}, nil)
	s, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearer{token}}}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s: %v", version, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The office's channels, threads and wiki pages are resources, read as
// the token's member: a DM the member is not in is "not found", exactly
// as a channel that does not exist.
func TestResourcesReadAsTheMember(t *testing.T) {
	ctx := context.Background()
	o, url := officeServer(t)
	general, err := o.off.ChannelByName(ctx, o.admin, "general")
	if err != nil {
		t.Fatal(err)
	}
	root, err := o.off.Post(ctx, o.admin, bullpen.PostInput{ChannelID: general.ID, Body: "the plan is ready", Source: bullpen.SourceWeb})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.off.Post(ctx, o.admin, bullpen.PostInput{ChannelID: general.ID, ThreadID: root.ID, Body: "see the wiki", Source: bullpen.SourceWeb}); err != nil {
		t.Fatal(err)
	}
	other, err := o.svc.Hire(ctx, o.admin, bullpen.HireInput{Spec: &bullpen.Role{Handle: "other", Name: "Other", Prompt: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	dm, err := o.off.OpenDM(ctx, o.admin, other.Agent.Member.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.off.Post(ctx, o.admin, bullpen.PostInput{ChannelID: dm.ID, Body: "secret salary talk", Source: bullpen.SourceWeb}); err != nil {
		t.Fatal(err)
	}

	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		s := connect(t, url, o.token, version)
		list, err := s.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
		}
		if !slices.Contains(uris, "bullpen://channels/general") || !slices.Contains(uris, "bullpen://wiki/release-plan") || slices.Contains(uris, "bullpen://channels/"+dm.Name) {
			t.Errorf("%s: resources = %v, want #general and the page, not the DM", version, uris)
		}
		for uri, want := range map[string]string{
			"bullpen://channels/general":         "the plan is ready",
			"bullpen://threads/" + itoa(root.ID): "see the wiki",
			"bullpen://wiki/release-plan":        "Ship on Friday.",
			"bullpen://wiki/Release%20plan":      "Ship on Friday.",
		} {
			res, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			if err != nil || !strings.Contains(res.Contents[0].Text, want) {
				t.Errorf("%s: read %s = %+v, %v; want %q", version, uri, res, err, want)
			}
		}
		for _, uri := range []string{"bullpen://channels/" + dm.Name, "bullpen://channels/nope", "bullpen://threads/999999", "bullpen://threads/x",
			"bullpen://wiki/missing", "bullpen://turns/424242", "bullpen://channels/general/extra", "other://x"} {
			_, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			if rpcCode(err) != jsonrpc.CodeInvalidParams {
				t.Errorf("%s: read %s = %v, want resource not found (-32602)", version, uri, err)
			}
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Prompts embed what they brief on, read as the member; completion
// offers the member's channels, the office's handles and the wiki's
// pages.
func TestPromptsAndCompletion(t *testing.T) {
	ctx := context.Background()
	o, url := officeServer(t)
	general, _ := o.off.ChannelByName(ctx, o.admin, "general")
	if _, err := o.off.Post(ctx, o.admin, bullpen.PostInput{ChannelID: general.ID, Body: "we ship friday", Source: bullpen.SourceWeb}); err != nil {
		t.Fatal(err)
	}
	s := connect(t, url, o.token, "2026-07-28")
	p, err := s.GetPrompt(ctx, &sdk.GetPromptParams{Name: "brief", Arguments: map[string]string{"channel": "#general"}})
	if err != nil || len(p.Messages) != 2 {
		t.Fatalf("brief #general = %+v, %v", p, err)
	}
	if r, ok := p.Messages[1].Content.(*sdk.EmbeddedResource); !ok || !strings.Contains(r.Resource.Text, "we ship friday") {
		t.Errorf("brief's embedded channel = %+v", p.Messages[1].Content)
	}
	if _, err := s.GetPrompt(ctx, &sdk.GetPromptParams{Name: "brief", Arguments: map[string]string{"channel": "nope"}}); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("brief #nope = %v, want invalid params", err)
	}
	if _, err := s.GetPrompt(ctx, &sdk.GetPromptParams{Name: "ask", Arguments: map[string]string{"handle": "ghost", "task": "x"}}); err == nil {
		t.Error("ask @ghost worked")
	}
	for _, tc := range []struct {
		ref       *sdk.CompleteReference
		arg, val  string
		want, not string
	}{
		{&sdk.CompleteReference{Type: "ref/prompt", Name: "brief"}, "channel", "gen", "general", ""},
		{&sdk.CompleteReference{Type: "ref/resource", URI: "bullpen://channels/{name}"}, "name", "#g", "general", ""},
		{&sdk.CompleteReference{Type: "ref/prompt", Name: "ask"}, "handle", "@te", "tester", "admin"},
		{&sdk.CompleteReference{Type: "ref/prompt", Name: "page"}, "page", "rel", "Release plan", ""},
		{&sdk.CompleteReference{Type: "ref/resource", URI: "bullpen://wiki/{slug}"}, "slug", "", "release-plan", ""},
	} {
		res, err := s.Complete(ctx, &sdk.CompleteParams{Ref: tc.ref, Argument: sdk.CompleteParamsArgument{Name: tc.arg, Value: tc.val}})
		if err != nil || !slices.Contains(res.Completion.Values, tc.want) || (tc.not != "" && slices.Contains(res.Completion.Values, tc.not)) {
			t.Errorf("complete %s %q = %+v, %v; want %q", tc.arg, tc.val, res, err, tc.want)
		}
	}
}

// post sends one raw JSON-RPC body under 2026-07-28 and returns the
// status and body.
func post(t *testing.T, url, token, body string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	var m struct {
		Method string
		Params struct{ Name, URI, TaskID string }
	}
	if json.Unmarshal([]byte(body), &m) == nil && m.Method != "" {
		req.Header.Set("Mcp-Method", m.Method)
		if n := m.Params.Name + m.Params.URI + m.Params.TaskID; n != "" {
			req.Header.Set("Mcp-Name", n)
		}
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// Protocol bad input gets a JSON-RPC error (or the transport's 4xx),
// never a 500, and changes nothing.
func TestBadProtocolInput(t *testing.T) {
	o, url := officeServer(t)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	tasks := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	for _, tc := range []struct{ body, want string }{
		{`{`, ""},
		{`[]`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `}}`, `"error"`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `,"name":"post_message","arguments":"x"}}`, `"isError":true`},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{` + meta + `}}`, `"error"`},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{` + meta + `,"uri":"bullpen://threads/-1"}}`, `-32602`},
		{`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{` + meta + `,"name":"brief"}}`, `"error"`},
		{`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{` + meta + `,"ref":{"type":"ref/nope"},"argument":{"name":"x","value":"y"}}}`, `"error"`},
		{`{"jsonrpc":"2.0","id":1,"method":"nope/nope","params":{` + meta + `}}`, `-32601`},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{` + meta + `,"taskId":"ask-1"}}`, `-32021`},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{` + tasks + `,"taskId":"ask-999999"}}`, `-32602`},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{` + tasks + `,"taskId":"x"}}`, `-32602`},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{` + tasks + `}}`, `-32602`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + tasks + `,"name":"ask_agent","arguments":{"agent":"ghost","question":"hi"}}}`, `"isError":true`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + tasks + `,"name":"ask_agent","arguments":{"nope":1}}}`, `"isError":true`},
	} {
		st, body := post(t, url, o.token, tc.body, nil)
		if st >= 500 || !strings.Contains(body, tc.want) {
			t.Errorf("%s = %d %s, want < 500 and %s", tc.body, st, body, tc.want)
		}
	}
	for _, h := range []map[string]string{{"Mcp-Method": "tools/list"}, {"Mcp-Method": ""}, {"Mcp-Name": ""}, {"Mcp-Name": "ask-2"}, {"Mcp-Protocol-Version": "2025-11-25"}} {
		st, body := post(t, url, o.token, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{`+tasks+`,"taskId":"ask-1"}}`, h)
		if st != 400 || !strings.Contains(body, "-32020") {
			t.Errorf("tasks/get with %v = %d %s, want 400 and -32020", h, st, body)
		}
		st, body = post(t, url, o.token, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+tasks+`,"name":"ask_agent","arguments":{"agent":"tester","question":"x"}}}`, h)
		if st != 400 || !strings.Contains(body, "-32020") {
			t.Errorf("ask_agent task with %v = %d %s, want 400 and -32020", h, st, body)
		}
	}
	if n := countMessages(t, o); n != 0 {
		t.Errorf("bad input posted %d messages", n)
	}
}

// rpcCode is the JSON-RPC error code in err, 0 if none.
func rpcCode(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func countMessages(t *testing.T, o *testOffice) int {
	t.Helper()
	general, _ := o.off.ChannelByName(context.Background(), o.admin, "general")
	page, err := o.off.ListMessages(context.Background(), o.admin, general.ID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Items)
}
