package web_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/bullpen-hq/bullpen/web"
)

// newAgentServer is newServer with an agents service on a scripted model.
func newAgentServer(t *testing.T, script scripted.Func) *testServer {
	t.Helper()
	db, off, token := openOffice(t, store.SQLite)
	svc, err := agents.New(agents.Config{Office: off, DB: db, Providers: map[string]llm.Provider{"scripted": scripted.New(script)},
		DefaultProvider: "scripted", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return serve(t, db, off, token, web.Config{ProviderNotice: svc.ProviderNotice()},
		web.Services{Office: off, Agents: svc}, func() { svc.Close() })
}

// echoScript answers every wake by posting "echo: <trigger>".
func echoScript(req llm.Request) (llm.Response, error) {
	v := agents.ViewOf(req)
	if v.Steps > 0 {
		return llm.Response{}, nil
	}
	i := strings.Index(v.Packet, ": ")
	body := strings.SplitN(v.Packet[i+2:], "\n", 2)[0]
	return llm.Response{Text: "echo: " + body}, nil
}

func TestAgentsAPI(t *testing.T) {
	ts := newAgentServer(t, echoScript)
	admin := ts.Token
	var roles struct{ Items []bullpen.RoleInfo }
	if st := ts.do("GET", "/api/v1/roles", admin, nil, &roles); st != 200 || len(roles.Items) < 8 {
		t.Fatalf("GET /roles = %d, %d roles", st, len(roles.Items))
	}
	var hired view.Hired
	if st := ts.do("POST", "/api/v1/agents", admin, map[string]any{"role": "starter/engineer", "handle": "eng"}, &hired); st != 201 || hired.Token == "" || hired.Agent.Handle != "eng" {
		t.Fatalf("hire = %d %+v", st, hired)
	}
	var e apiError
	if st := ts.do("POST", "/api/v1/agents", hired.Token, map[string]any{"role": "starter/pm"}, &e); st != 403 {
		t.Errorf("agent hires: %d %+v, want 403", st, e)
	}
	spec := map[string]any{"handle": "qa", "name": "QA", "tools": []string{"post_message", "fly"}, "prompt": "test"}
	if st := ts.do("POST", "/api/v1/agents", admin, map[string]any{"spec": spec}, &e); st != 400 || !strings.Contains(e.Error.Message, `"tools[1]"`) {
		t.Errorf("invalid inline spec: %d %q, want 400 naming tools[1]", st, e.Error.Message)
	}
	var a bullpen.AgentView
	if st := ts.do("PATCH", "/api/v1/agents/"+itoa(hired.Agent.ID), admin, map[string]any{"title": "Staff engineer", "budgets": map[string]int{"max_steps": 3}}, &a); st != 200 || a.Title != "Staff engineer" || a.Spec.Budgets.MaxSteps != 3 {
		t.Errorf("PATCH agent = %d %+v", st, a)
	}
	if st := ts.do("PATCH", "/api/v1/agents/"+itoa(hired.Agent.ID), admin, map[string]any{"model": strings.Repeat("x", 300)}, &e); st != 400 || !strings.Contains(e.Error.Message, `"model"`) {
		t.Errorf("PATCH invalid = %d %q", st, e.Error.Message)
	}

	// The agent's own token: it posts as itself, whatever the body says.
	var m bullpen.Message
	if st := ts.do("POST", "/api/v1/channels/1/messages", hired.Token, map[string]any{"body": "hello from eng"}, &m); st != 201 || m.AuthorID != hired.Agent.ID {
		t.Errorf("agent posts with its token: %d author %d, want %d", st, m.AuthorID, hired.Agent.ID)
	}
	if st := ts.do("POST", "/api/v1/channels/1/messages", hired.Token, map[string]any{"body": "x", "author_id": 1}, &e); st != 400 {
		t.Errorf("post with author_id = %d, want 400", st)
	}

	// A session: the DM, a message, the agent's answer on the stream.
	stream := ts.sse("/api/v1/agents/"+itoa(hired.Agent.ID)+"/events", admin)
	var ch bullpen.Channel
	if st := ts.do("POST", "/api/v1/agents/"+itoa(hired.Agent.ID)+"/session", admin, nil, &ch); st != 200 || ch.Kind != bullpen.ChannelDM {
		t.Fatalf("open session = %d %+v", st, ch)
	}
	if st := ts.do("POST", "/api/v1/agents/"+itoa(hired.Agent.ID)+"/messages", admin, map[string]any{"body": "ping"}, &m); st != 201 || m.ChannelID != ch.ID {
		t.Fatalf("post to agent = %d %+v", st, m)
	}
	got := stream.until(t, func(typ, data string) bool {
		return typ == bullpen.EventMessagePosted && strings.Contains(data, "echo: ping")
	})
	for _, want := range []string{bullpen.EventTurnStarted, bullpen.EventAgentDelta, bullpen.EventMessagePosted} {
		if !strings.Contains(strings.Join(got, "\n"), "event: "+want) {
			t.Errorf("stream lacks %s:\n%s", want, strings.Join(got, "\n"))
		}
	}
	var turns struct{ Items []bullpen.Turn }
	waitUntil(t, func() bool {
		ts.do("GET", "/api/v1/agents/"+itoa(hired.Agent.ID)+"/turns", admin, nil, &turns)
		return len(turns.Items) == 1 && turns.Items[0].State == "done"
	})
	if turns.Items[0].InputTokens == 0 {
		t.Errorf("turn has no token usage: %+v", turns.Items[0])
	}

	// Firing keeps history, revokes the agent's token, stops its wakes.
	if st := ts.do("DELETE", "/api/v1/agents/"+itoa(hired.Agent.ID), admin, nil, &a); st != 200 || a.State != "fired" {
		t.Errorf("fire = %d %+v", st, a)
	}
	if st := ts.do("GET", "/api/v1/me", hired.Token, nil, nil); st != 401 {
		t.Errorf("fired agent's token: %d, want 401", st)
	}
	if st := ts.do("POST", "/api/v1/agents/"+itoa(hired.Agent.ID)+"/messages", admin, map[string]any{"body": "still there?"}, &e); st != 400 {
		t.Errorf("post to a fired agent = %d, want 400", st)
	}
	var list struct{ Items []bullpen.AgentView }
	if ts.do("GET", "/api/v1/agents", admin, nil, &list); len(list.Items) != 1 || list.Items[0].State != "fired" {
		t.Errorf("agents after firing = %+v", list.Items)
	}
}

func TestApprovalsAPI(t *testing.T) {
	ts := newAgentServer(t, func(req llm.Request) (llm.Response, error) {
		v := agents.ViewOf(req)
		if v.Steps > 0 || strings.Contains(v.Packet, "Approval #") {
			return llm.Response{}, nil
		}
		return llm.Response{ToolCalls: []llm.ToolCall{{Name: "read_channel", Arguments: []byte(`{"channel":"general"}`)}}}, nil
	})
	spec := map[string]any{"handle": "writer", "name": "Writer", "tools": []string{"post_message", "read_channel"}, "approvals": []string{"read_channel"}, "prompt": "You write."}
	var hired view.Hired
	if st := ts.do("POST", "/api/v1/agents", ts.Token, map[string]any{"spec": spec}, &hired); st != 201 {
		t.Fatalf("hire = %d", st)
	}
	ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]any{"body": "@writer write"}, nil)
	var list struct{ Items []agents.Approval }
	waitUntil(t, func() bool {
		ts.do("GET", "/api/v1/approvals?state=pending", ts.Token, nil, &list)
		return len(list.Items) == 1
	})
	id := itoa(list.Items[0].ID)
	var e apiError
	if st := ts.do("POST", "/api/v1/approvals/"+id, hired.Token, map[string]any{"decision": "approve"}, &e); st != 403 {
		t.Errorf("agent answers = %d, want 403", st)
	}
	if st := ts.do("POST", "/api/v1/approvals/"+id, ts.Token, map[string]any{"decision": "maybe"}, &e); st != 400 {
		t.Errorf("bad decision = %d, want 400", st)
	}
	var a agents.Approval
	if st := ts.do("POST", "/api/v1/approvals/"+id, ts.Token, map[string]any{"decision": "deny", "note": "not now"}, &a); st != 200 || a.State != "denied" {
		t.Errorf("deny = %d %+v", st, a)
	}
	if st := ts.do("POST", "/api/v1/approvals/"+id, ts.Token, map[string]any{"decision": "approve"}, &e); st != 409 {
		t.Errorf("second answer = %d, want 409", st)
	}
}

func TestAgentsUnavailable(t *testing.T) {
	ts := newServer(t, web.Config{})
	var e apiError
	if st := ts.do("GET", "/api/v1/agents", ts.Token, nil, &e); st != 503 {
		t.Errorf("GET /agents without an agents service = %d, want 503", st)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 20 s")
}

// sseStream reads a server-sent event stream.
type sseStream struct {
	r    *bufio.Reader
	resp *http.Response
}

func (ts *testServer) sse(path, token string) *sseStream {
	ts.t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		ts.t.Fatalf("GET %s: %v %v", path, err, resp)
	}
	ts.t.Cleanup(func() { resp.Body.Close() })
	return &sseStream{r: bufio.NewReader(resp.Body), resp: resp}
}

// until reads events until match returns true; it returns the lines read.
func (s *sseStream) until(t *testing.T, match func(typ, data string) bool) []string {
	t.Helper()
	var lines []string
	typ := ""
	timer := time.AfterFunc(20*time.Second, func() { s.resp.Body.Close() })
	defer timer.Stop()
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream ended: %v; read:\n%s", err, strings.Join(lines, ""))
		}
		line = strings.TrimRight(line, "\n")
		lines = append(lines, line)
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			typ = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok && match(typ, v) {
			return lines
		}
	}
}
