package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/bullpen-hq/bullpen/web"
)

// checkScript runs one tool call, then answers with text.
func checkScript(req llm.Request) (llm.Response, error) {
	if agents.ViewOf(req).Steps == 0 {
		return llm.Response{ToolCalls: []llm.ToolCall{{Name: bullpen.ToolPostMessage, Arguments: json.RawMessage(`{"body":"The disk has 40 GB free."}`)}}}, nil
	}
	return llm.Response{}, nil
}

// newTurnServer is a server with agents and the turn inspector on a
// scripted model.
func newTurnServer(t *testing.T) *testServer {
	t.Helper()
	db, off, token := openOffice(t, store.SQLite)
	svc, err := agents.New(agents.Config{Office: off, DB: db, Providers: map[string]llm.Provider{"scripted": scripted.New(checkScript)},
		DefaultProvider: "scripted", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return serve(t, db, off, token, web.Config{}, web.Services{Office: off, Agents: svc, Turns: svc}, func() { svc.Close() })
}

// askAndInspect hires @eng and @pm, asks @eng something and returns the
// agents and the finished turn as the turn list shows it.
func askAndInspect(t *testing.T, ts *testServer) (eng, pm view.Hired, turn map[string]any) {
	t.Helper()
	ts.do("POST", "/api/v1/agents", ts.Token, map[string]any{"role": "starter/engineer", "handle": "eng"}, &eng)
	ts.do("POST", "/api/v1/agents", ts.Token, map[string]any{"role": "starter/pm", "handle": "pm"}, &pm)
	if eng.Token == "" || pm.Token == "" {
		t.Fatalf("hire: %+v %+v", eng, pm)
	}
	ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]any{"body": "@eng please check the disk space on the build box"}, nil)
	var list struct{ Items []map[string]any }
	waitUntil(t, func() bool {
		ts.do("GET", "/api/v1/agents/"+itoa(eng.Agent.ID)+"/turns", ts.Token, nil, &list)
		return len(list.Items) == 1 && list.Items[0]["state"] == "done"
	})
	return eng, pm, list.Items[0]
}

func TestTurnInspectorAPI(t *testing.T) {
	ts := newTurnServer(t)
	eng, pm, listed := askAndInspect(t, ts)
	id := int64(listed["id"].(float64))
	if listed["url"] != "/api/v1/turns/"+itoa(id) || listed["inspect_url"] != "/turns/"+itoa(id) {
		t.Errorf("turn list links = %v, %v; want /api/v1/turns/%d and /turns/%d", listed["url"], listed["inspect_url"], id, id)
	}
	var d view.TurnDetail
	if st := ts.do("GET", "/api/v1/turns/"+itoa(id), ts.Token, nil, &d); st != 200 {
		t.Fatalf("GET /turns/%d = %d", id, st)
	}
	const line = "@admin: @eng please check the disk space on the build box"
	if !strings.Contains(d.WorkPacket, line) || !strings.Contains(d.SystemPrefix, "@eng") || d.PromptSource != "request" {
		t.Errorf("work packet %q (from %q) lacks %q, or the prefix lacks the agent", d.WorkPacket, d.PromptSource, line)
	}
	if d.Turn.InputTokens == 0 || d.Turn.OutputTokens == 0 || d.Turn.InputTokens != d.ModelCalls[0].InputTokens+d.ModelCalls[1].InputTokens {
		t.Errorf("turn tokens %d in / %d out; want the sum of its calls", d.Turn.InputTokens, d.Turn.OutputTokens)
	}
	if len(d.Turn.ToolCalls) != 1 || d.Turn.ToolCalls[0].Name != bullpen.ToolPostMessage || d.Turn.ToolCalls[0].State != "ok" ||
		!strings.Contains(d.Turn.ToolCalls[0].Arguments, "40 GB free") || !strings.Contains(d.Turn.ToolCalls[0].Result, "message_id") {
		t.Errorf("tool calls = %+v; want the post_message call with its arguments and result", d.Turn.ToolCalls)
	}
	if len(d.ModelCalls) != 2 || !d.ModelCalls[0].Simulated || !strings.Contains(d.ModelCalls[0].Request, "please check the disk space") {
		t.Errorf("model calls = %d; want 2 simulated calls whose first request has the packet", len(d.ModelCalls))
	}
	if len(d.Wakes) != 1 || d.Wakes[0].Reason != "mention" || d.Wakes[0].Message == nil || d.Wakes[0].Message.Author != "admin" ||
		d.Wakes[0].Message.Channel != "general" {
		t.Errorf("wakes = %+v; want admin's mention in #general", d.Wakes)
	}
	if d.Cost != nil || !d.Simulated || d.Budgets.Steps.Used != 2 || d.Budgets.Steps.Left != d.Budgets.Steps.Limit-2 || d.Budgets.DailyTokens.Used == 0 {
		t.Errorf("cost %+v, budgets %+v; want no cost for a simulation and budgets used by this turn", d.Cost, d.Budgets)
	}

	// Access: the agent itself may read it; another agent may not.
	if st := ts.do("GET", "/api/v1/turns/"+itoa(id), eng.Token, nil, nil); st != 200 {
		t.Errorf("the agent reads its own turn: %d, want 200", st)
	}
	var e apiError
	if st := ts.do("GET", "/api/v1/turns/"+itoa(id), pm.Token, nil, &e); st != 403 || !strings.Contains(e.Error.Message, "own turns") {
		t.Errorf("another agent reads it: %d %q, want 403", st, e.Error.Message)
	}
	if st := ts.do("GET", "/api/v1/turns/"+itoa(id), "", nil, nil); st != 401 {
		t.Errorf("no credential: %d, want 401", st)
	}
}

func TestTurnInspectorErrors(t *testing.T) {
	ts := newTurnServer(t)
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/api/v1/turns/424242", 404, "turn 424242 not found"},
		{"/api/v1/turns/abc", 400, "turn id must be a positive integer"},
		{"/api/v1/turns/0", 400, "turn id must be a positive integer"},
		{"/api/v1/turns/-3", 400, "turn id must be a positive integer"},
		// An agent's turns check limit and before like the events do.
		{"/api/v1/agents/1/turns?limit=0", 400, "limit must be between 1 and 200"},
		{"/api/v1/agents/1/turns?limit=-4", 400, "limit must be between 1 and 200"},
		{"/api/v1/agents/1/turns?limit=5000", 400, "limit must be between 1 and 200"},
		{"/api/v1/agents/1/turns?limit=x", 400, "query parameter limit must be an integer"},
		{"/api/v1/agents/1/turns?before=5", 400, "before is not supported"},
	} {
		var e apiError
		if st := ts.do("GET", tc.path, ts.Token, nil, &e); st != tc.status || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("GET %s = %d %q, want %d with %q", tc.path, st, e.Error.Message, tc.status, tc.want)
		}
	}
}

// The page escapes what the model and the people wrote: text as text.
func TestTurnInspectorPageEscapes(t *testing.T) {
	ts := newTurnServer(t)
	var eng view.Hired
	ts.do("POST", "/api/v1/agents", ts.Token, map[string]any{"role": "starter/engineer", "handle": "eng"}, &eng)
	ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]any{"body": "@eng <img src=x onerror=alert(1)> check"}, nil)
	var list struct{ Items []bullpen.Turn }
	waitUntil(t, func() bool {
		ts.do("GET", "/api/v1/agents/"+itoa(eng.Agent.ID)+"/turns", ts.Token, nil, &list)
		return len(list.Items) == 1 && list.Items[0].State == "done"
	})
	b := ts.login(ts.Token)
	resp, err := b.client.Get(ts.URL + "/turns/" + itoa(list.Items[0].ID))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(string(page), "<img src=x") || !strings.Contains(string(page), "&lt;img src=x onerror=alert(1)&gt; check") {
		t.Errorf("page = %d; want the trigger text escaped:\n%.2000s", resp.StatusCode, page)
	}
	resp, _ = b.client.Get(ts.URL + "/turns/999999")
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("page of an unknown turn = %d, want 404", resp.StatusCode)
	}
}
