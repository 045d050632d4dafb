package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bullpen-hq/bullpen"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const tasksMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// result posts body and decodes its JSON-RPC result; an error fails.
func result(t *testing.T, url, token, body string) map[string]any {
	t.Helper()
	st, raw := post(t, url, token, body, nil)
	var msg struct {
		Result map[string]any
		Error  any
	}
	if st != 200 || json.Unmarshal([]byte(raw), &msg) != nil || msg.Error != nil {
		t.Fatalf("%s = %d %s", body, st, raw)
	}
	return msg.Result
}

// ask_agent under the Tasks extension: the call returns a working task
// at once; tasks/get reads it (from the thread, so from any replica)
// until the asked member replies, then inlines the answer. Only the
// asker can read its task; a withdrawn question reads as cancelled, and
// cancelling twice is the same ack.
func TestAskAgentTask(t *testing.T) {
	ctx := context.Background()
	o, url := officeServer(t)
	other, err := o.svc.Hire(ctx, o.admin, bullpen.HireInput{Spec: &bullpen.Role{Handle: "other", Name: "Other", Prompt: "x", Tools: []string{bullpen.ToolPostMessage}}})
	if err != nil {
		t.Fatal(err)
	}
	ask := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + tasksMeta + `,"name":"ask_agent","arguments":{"agent":"other","question":"what is the status?"}}}`
	task := result(t, url, o.token, ask)
	id, _ := task["taskId"].(string)
	if task["resultType"] != "task" || task["status"] != "working" || id == "" || task["ttlMs"] == nil || task["pollIntervalMs"] == nil {
		t.Fatalf("ask_agent = %v, want a working task", task)
	}
	get := `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{` + tasksMeta + `,"taskId":"` + id + `"}}`
	if got := result(t, url, o.token, get); got["status"] != "working" || got["result"] != nil || got["resultType"] != "complete" {
		t.Errorf("tasks/get before the answer = %v", got)
	}
	if st, raw := post(t, url, other.Token, get, nil); st != 400 || !strings.Contains(raw, "-32602") {
		t.Errorf("tasks/get by another member = %d %s, want unknown task", st, raw)
	}
	var rootID int64
	if _, err := jsonNumber(id[len("ask-"):], &rootID); err != nil {
		t.Fatal(err)
	}
	root, _, err := o.off.Thread(ctx, o.agent, rootID)
	if err != nil || !strings.Contains(root.Body, "@other what is the status?") || root.AuthorID != o.agent.ID {
		t.Fatalf("the question = %+v, %v", root, err)
	}
	if _, err := o.off.Post(ctx, other.Agent.Member, bullpen.PostInput{ChannelID: root.ChannelID, ThreadID: root.ID, Body: "all green", Source: bullpen.SourceAgent}); err != nil {
		t.Fatal(err)
	}
	got := result(t, url, o.token, get)
	if raw, _ := json.Marshal(got["result"]); got["status"] != "completed" || !strings.Contains(string(raw), "all green") {
		t.Errorf("tasks/get after the answer = %v", got)
	}

	task = result(t, url, o.token, ask)
	id2, _ := task["taskId"].(string)
	cancel := `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{` + tasksMeta + `,"taskId":"` + id2 + `"}}`
	for range 2 {
		if ack := result(t, url, o.token, cancel); ack["resultType"] != "complete" || len(ack) != 1 {
			t.Errorf("tasks/cancel = %v, want the bare ack", ack)
		}
	}
	get2 := strings.Replace(get, id, id2, 1)
	if got := result(t, url, o.token, get2); got["status"] != "cancelled" {
		t.Errorf("tasks/get after cancel = %v", got)
	}
	if n := countMessages(t, o); n != 2 {
		t.Errorf("#general has %d top-level messages, want the 2 questions", n)
	}
}

func jsonNumber(s string, v *int64) (int, error) { return 0, json.Unmarshal([]byte(s), v) }

// A client without the Tasks extension gets ask_agent synchronously:
// it waits (reporting progress) for the answer, then says where to read
// it; and every tool call with a progress token gets progress.
func TestAskAgentSyncAndProgress(t *testing.T) {
	ctx := context.Background()
	o, url := officeServer(t)
	if _, err := o.svc.Hire(ctx, o.admin, bullpen.HireInput{Spec: &bullpen.Role{Handle: "other", Name: "Other", Prompt: "x"}}); err != nil {
		t.Fatal(err)
	}
	var progress atomic.Int64
	c := sdk.NewClient(&sdk.Implementation{Name: "sync", Version: "0"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) { progress.Add(1) }})
	s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearer{o.token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	params := &sdk.CallToolParams{Name: "ask_agent", Arguments: map[string]any{"agent": "other", "question": "ping?"}}
	params.SetProgressToken("p1")
	res, err := s.CallTool(ctx, params)
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "no answer yet") {
		t.Fatalf("ask_agent = %+v, %v", res, err)
	}
	if progress.Load() == 0 {
		t.Error("no progress notification during ask_agent")
	}
}
