package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/bullpen-hq/bullpen/web"
)

// workspaceScript runs the command named in the trigger ("run: CMD") with
// sandbox_exec and posts the tool's result.
func workspaceScript(req llm.Request) (llm.Response, error) {
	v := agents.ViewOf(req)
	if v.Steps > 0 {
		return llm.Response{Text: "result " + v.Last}, nil
	}
	_, cmd, ok := strings.Cut(v.Packet, "run: ")
	if !ok {
		return llm.Response{Text: "nothing to run"}, nil
	}
	cmd = strings.SplitN(cmd, "\n", 2)[0]
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: bullpen.ToolSandboxExec, Arguments: args}}}, nil
}

// newWorkspaceServer is a sandbox server with agents on workspaceScript
// whose workspaces idle out after idle.
func newWorkspaceServer(t *testing.T, idle time.Duration) *sbServer {
	return newSandboxServerWith(t, web.Config{}, sandboxes.Config{}, func(db *store.DB, off *office.Office, sb *sandboxes.Service) *agents.Service {
		svc, err := agents.New(agents.Config{Office: off, DB: db, Sandboxes: sb.Workspaces(idle),
			Providers: map[string]llm.Provider{"scripted": scripted.New(workspaceScript)}, DefaultProvider: "scripted",
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return svc
	})
}

// askAgent posts "@handle run: cmd" in #general and waits for the agent's
// answer (in the thread): the tool result it posts.
func (s *sbServer) askAgent(agent bullpen.Member, cmd string) string {
	s.t.Helper()
	var m bullpen.Message
	if st := s.do("POST", "/api/v1/channels/1/messages", s.Token, map[string]any{"body": "@" + agent.Handle + " run: " + cmd}, &m); st != 201 {
		s.t.Fatalf("post: %d", st)
	}
	var answer string
	waitUntil(s.t, func() bool {
		var evs struct{ Items []bullpen.Event }
		s.do("GET", "/api/v1/events?since=0&limit=1000", s.Token, nil, &evs)
		for _, ev := range evs.Items {
			var got bullpen.Message
			if ev.Type == bullpen.EventMessagePosted && json.Unmarshal(ev.Payload, &got) == nil && got.AuthorID == agent.ID && got.ID > m.ID {
				_, answer, _ = strings.Cut(got.Body, "result ")
				return true
			}
		}
		return false
	})
	return answer
}

// workspaceOf returns the agent's only sandbox, failing if it has another
// number of them.
func (s *sbServer) workspaceOf(agent bullpen.Member) sandbox.Info {
	s.t.Helper()
	all, err := s.Svc.Manager().List(context.Background(), map[string]string{bullpen.SandboxOwnerTag: strconv.FormatInt(agent.ID, 10)})
	if err != nil || len(all) != 1 {
		s.t.Fatalf("agent's sandboxes = %+v, %v; want exactly one", all, err)
	}
	return all[0]
}

// Property 8: an agent's sandbox is made from its role on first use,
// stopped once idle, and started again by the next sandbox tool call with
// its files, its id, name and tags unchanged.
func TestAgentSandboxIdlesAndWakes(t *testing.T) {
	s := newWorkspaceServer(t, time.Second)
	var hired view.Hired
	if st := s.do("POST", "/api/v1/agents", s.Token, map[string]any{"role": "starter/engineer", "handle": "eng"}, &hired); st != 201 {
		t.Fatalf("hire: %d", st)
	}
	agent := hired.Agent.Member

	first := s.askAgent(agent, "echo kept > keep.txt && echo one")
	if !strings.Contains(first, `"exit_code":0`) || !strings.Contains(first, `one`) {
		t.Fatalf("first command's result = %q, want exit 0 and its output", first)
	}
	ws := s.workspaceOf(agent)
	if bullpen.SandboxName(ws.Name, ws.Tags) != "agent-eng" || ws.Tags[bullpen.SandboxAgentTag] != "workspace" || ws.MemoryBytes != 1<<30 {
		t.Errorf("workspace = name %q tags %v memory %d, want agent-eng, the agent tag and the role's 1Gi", bullpen.SandboxName(ws.Name, ws.Tags), ws.Tags, ws.MemoryBytes)
	}
	if ws.IdleTimeout != time.Second || ws.IdleAction != sandbox.IdleStop {
		t.Errorf("workspace idle = %v %s, want 1s stop", ws.IdleTimeout, ws.IdleAction)
	}
	waitUntil(t, func() bool { return s.workspaceOf(agent).State == sandbox.StateStopped })

	second := s.askAgent(agent, "cat keep.txt")
	if !strings.Contains(second, `"exit_code":0`) || !strings.Contains(second, `kept`) {
		t.Fatalf("command after the idle stop = %q, want exit 0 and the file kept from before", second)
	}
	again := s.workspaceOf(agent)
	if again.ID != ws.ID || bullpen.SandboxName(again.Name, again.Tags) != "agent-eng" || again.Tags[bullpen.SandboxAgentTag] != "workspace" || again.State != sandbox.StateRunning {
		t.Errorf("workspace after waking = %s %q %v %s, want the same %s running", again.ID, bullpen.SandboxName(again.Name, again.Tags), again.Tags, again.State, ws.ID)
	}
}

// A paused workspace is resumed by the next call too, and a flood of
// output reaches the model as head and tail only.
func TestAgentSandboxResumesAndBoundsOutput(t *testing.T) {
	s := newWorkspaceServer(t, time.Hour)
	var hired view.Hired
	if st := s.do("POST", "/api/v1/agents", s.Token, map[string]any{"role": "starter/engineer", "handle": "eng"}, &hired); st != 201 {
		t.Fatalf("hire: %d", st)
	}
	agent := hired.Agent.Member
	s.askAgent(agent, "true")
	ws := s.workspaceOf(agent)
	if err := s.Svc.Pause(context.Background(), agent, ws.ID); err != nil {
		t.Fatal(err)
	}
	out := s.askAgent(agent, "echo START; head -c 50000000 /dev/zero | tr '\\0' x; echo; echo END")
	var res bullpen.WorkspaceResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("result %.200q: %v", out, err)
	}
	if res.ExitCode != 0 || !res.Truncated || !strings.HasPrefix(res.Stdout, "START\n") || !strings.HasSuffix(res.Stdout, "END\n") ||
		!strings.Contains(res.Stdout, "bytes left out") || len(res.Stdout) > 8000 {
		t.Errorf("flood result: exit %d truncated %v, %d bytes: %.80q … %.80q", res.ExitCode, res.Truncated, len(res.Stdout), res.Stdout, res.Stdout[max(0, len(res.Stdout)-80):])
	}
	if got := s.workspaceOf(agent); got.ID != ws.ID || got.State != sandbox.StateRunning {
		t.Errorf("workspace = %s %s, want %s running again", got.ID, got.State, ws.ID)
	}
}
