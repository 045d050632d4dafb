package web_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/bullpen-hq/bullpen/web"
)

// execsOf reads a page of a sandbox's exec history as token.
func (s *sbServer) execsOf(token, id, query string) (bullpen.SandboxExecPage, int) {
	s.t.Helper()
	var page bullpen.SandboxExecPage
	st := s.do("GET", "/api/v1/sandboxes/"+id+"/execs"+query, token, nil, &page)
	return page, st
}

// The agent's own sandbox_exec lands in its sandbox's exec history, with
// command, exit code, duration and output, read back from the store (as a
// reload does), beside a command a member ran through the API.
func TestExecHistoryHasAgentCommands(t *testing.T) {
	s := newWorkspaceServer(t, time.Hour)
	var hired view.Hired
	if st := s.do("POST", "/api/v1/agents", s.Token, map[string]any{"role": "starter/engineer", "handle": "eng"}, &hired); st != 201 {
		t.Fatalf("hire: %d", st)
	}
	agent := hired.Agent.Member
	s.askAgent(agent, "echo agent-said-$((6*7)); echo oops >&2; exit 3")
	ws := s.workspaceOf(agent)
	if st := s.do("POST", "/api/v1/sandboxes/"+ws.ID+"/run", s.Token, map[string]any{"cmd": []string{"echo", "admin-ran"}}, nil); st != 200 {
		t.Fatalf("run: %d", st)
	}
	var page bullpen.SandboxExecPage
	waitUntil(t, func() bool {
		page, _ = s.execsOf(s.Token, ws.ID, "")
		return len(page.Items) == 2 && !page.Items[0].Running
	})
	admin, byAgent := page.Items[0], page.Items[1]
	if admin.Command != "echo admin-ran" || admin.Stdout != "admin-ran\n" || *admin.ExitCode != 0 || admin.ByID == agent.ID {
		t.Errorf("newest entry = %+v, want the admin's echo", admin)
	}
	if !strings.Contains(byAgent.Command, "agent-said") || byAgent.ByID != agent.ID || byAgent.ExitCode == nil || *byAgent.ExitCode != 3 {
		t.Fatalf("older entry = %+v, want the agent's command, by the agent, exit 3", byAgent)
	}
	if byAgent.Stdout != "agent-said-42\n" || byAgent.Stderr != "oops\n" || byAgent.StdoutBytes != 14 || byAgent.ID == "" || byAgent.FinishedAt == nil {
		t.Errorf("agent entry output = %q / %q (%d bytes), id %q, finished %v", byAgent.Stdout, byAgent.Stderr, byAgent.StdoutBytes, byAgent.ID, byAgent.FinishedAt)
	}
	// The agent's sandbox is not another member's to read.
	if _, st := s.execsOf(s.BobToken, ws.ID, ""); st != 404 {
		t.Errorf("bob reads the agent's exec history: %d, want 404", st)
	}
}

// The history pages newest first with a cursor, keeps only the head and
// tail of a flood of output, and refuses a bad limit.
func TestExecHistoryPagesAndBounds(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	var sb struct{ ID string }
	if st := s.do("POST", "/api/v1/sandboxes", s.Token, map[string]any{}, &sb); st != 201 {
		t.Fatalf("create: %d", st)
	}
	for i := range 3 {
		if st := s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/run", s.Token, map[string]any{"cmd": []string{"echo", fmt.Sprint("n", i)}}, nil); st != 200 {
			t.Fatalf("run %d: %d", i, st)
		}
	}
	flood := "head -c 1000000 /dev/zero | tr '\\0' x; echo END"
	if st := s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/run", s.Token, map[string]any{"cmd": []string{"/bin/sh", "-c", flood}}, nil); st != 200 {
		t.Fatalf("run flood: %d", st)
	}
	var first bullpen.SandboxExecPage
	waitUntil(t, func() bool {
		first, _ = s.execsOf(s.Token, sb.ID, "?limit=2")
		return len(first.Items) == 2 && !first.Items[0].Running
	})
	big := first.Items[0]
	if big.StdoutBytes != 1000004 || len(big.Stdout) > 10<<10 || !strings.HasSuffix(big.Stdout, "END\n") || !strings.Contains(big.Stdout, "bytes left out") {
		t.Errorf("flood entry keeps %d of %d bytes, ends %q; want head and tail only", len(big.Stdout), big.StdoutBytes, big.Stdout[max(0, len(big.Stdout)-20):])
	}
	if first.Items[1].Command != "echo n2" || first.NextBefore == 0 {
		t.Fatalf("first page = %+v, want the flood and echo n2 and a cursor", first)
	}
	next, _ := s.execsOf(s.Token, sb.ID, fmt.Sprintf("?limit=2&before=%d", first.NextBefore))
	if len(next.Items) != 2 || next.Items[0].Command != "echo n1" || next.Items[1].Command != "echo n0" {
		t.Errorf("second page = %+v, want echo n1, echo n0", next.Items)
	}
	for _, q := range []string{"?limit=0x", "?limit=1000", "?before=-1"} {
		if _, st := s.execsOf(s.Token, sb.ID, q); st != 400 {
			t.Errorf("history%s: %d, want 400", q, st)
		}
	}
}

// A sandbox holding secrets keeps no output in its history: a command may
// print a secret, and stored events never carry one.
func TestExecHistoryWithholdsOutputOfSecretSandbox(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	var sb struct{ ID string }
	if st := s.do("POST", "/api/v1/sandboxes", s.Token, map[string]any{"secrets": []map[string]string{{"name": "API_KEY", "value": "never-stored-42"}}}, &sb); st != 201 {
		t.Fatalf("create: %d", st)
	}
	if st := s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/run", s.Token, map[string]any{"cmd": []string{"/bin/sh", "-c", "echo $API_KEY"}}, nil); st != 200 {
		t.Fatalf("run: %d", st)
	}
	var page bullpen.SandboxExecPage
	waitUntil(t, func() bool {
		page, _ = s.execsOf(s.Token, sb.ID, "")
		return len(page.Items) == 1 && !page.Items[0].Running
	})
	if e := page.Items[0]; !e.OutputWithheld || e.Stdout != "" || *e.ExitCode != 0 {
		t.Errorf("entry = %+v, want exit 0 with its output withheld", e)
	}
	body := readAll(t, s.req("GET", "/api/v1/events?limit=1000", s.Token, nil, ""))
	if strings.Contains(body, "never-stored-42") {
		t.Errorf("the event log holds the secret: %s", body)
	}
}

// A sandbox that has run nothing has an empty history: items is [], not
// null, as the OpenAPI document says (the validating transport checks it).
func TestExecHistoryOfANewSandboxIsEmptyList(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	var sb struct{ ID string }
	if st := s.do("POST", "/api/v1/sandboxes", s.Token, map[string]any{}, &sb); st != 201 {
		t.Fatalf("create: %d", st)
	}
	body := readAll(t, s.req("GET", "/api/v1/sandboxes/"+sb.ID+"/execs", s.Token, nil, ""))
	if !strings.Contains(body, `"items":[]`) {
		t.Errorf("history of a new sandbox = %s, want items []", body)
	}
}
