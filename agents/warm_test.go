package agents

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store"
)

// warmBox is a fakeBox that is also a Warmer and says when it was warmed.
type warmBox struct {
	*fakeBox
	mu     sync.Mutex
	warmed []string // "handle image"
	signal chan struct{}
}

func (b *warmBox) Warm(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec) error {
	b.mu.Lock()
	b.warmed = append(b.warmed, agent.Handle+" "+spec.Image)
	b.mu.Unlock()
	select {
	case b.signal <- struct{}{}:
	default:
	}
	return nil
}

func (b *warmBox) calls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.warmed...)
}

// A turn of a role with sandbox tools starts the agent's sandbox as it
// begins: the model's first answer waits for the warm-up, which fails
// unless the warm-up came before any tool call (the old, lazy start). A
// role without sandbox tools never starts one.
func TestTurnWarmsTheSandboxBeforeTheModelAnswers(t *testing.T) {
	box := &warmBox{fakeBox: newFakeBox(), signal: make(chan struct{}, 1)}
	var warmedFirst []bool
	prov := scripted.New(func(req llm.Request) (llm.Response, error) {
		v := ViewOf(req)
		if v.Steps > 0 {
			return llm.Response{Text: "done"}, nil
		}
		if !hasTool(v.Tools, bullpen.ToolSandboxExec) {
			return llm.Response{Text: "nothing to run"}, nil
		}
		select {
		case <-box.signal:
			warmedFirst = append(warmedFirst, true)
		case <-time.After(5 * time.Second):
			warmedFirst = append(warmedFirst, false)
		}
		return llm.Response{ToolCalls: []llm.ToolCall{call(bullpen.ToolSandboxExec, map[string]any{"command": "echo hi"})}}, nil
	})
	h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": prov}, func(c *Config) { c.Sandboxes = box })
	h.hire("starter/engineer")
	h.hire("starter/lead")
	h.start()
	h.post(h.admin, h.general.ID, 0, "@engineer run echo hi")
	h.waitIdle()
	if len(warmedFirst) != 1 || !warmedFirst[0] {
		t.Fatalf("warmed before the model's first answer = %v, want [true]", warmedFirst)
	}
	if got := box.calls(); len(got) != 1 || got[0] != "engineer host" {
		t.Errorf("Warm calls = %q, want one for engineer's host image", got)
	}
	if len(box.execs) != 1 || box.execs[0] != "engineer: echo hi" {
		t.Errorf("execs = %q, want the command once", box.execs)
	}
	h.post(h.admin, h.general.ID, 0, "@lead what is up?")
	h.waitIdle()
	if got := box.calls(); len(got) != 1 {
		t.Errorf("after lead's turn, Warm calls = %q: a role without sandbox tools started a sandbox", got)
	}
	// An agent CLI's workspace needs the CLI's mounts and limits: only
	// its own path (CLISandboxes) makes or starts it.
	role, _ := h.svc.Catalog().Role("starter/engineer")
	role.Handle, role.Runtime = "clieng", bullpen.RuntimeClaudeCode
	if _, err := h.svc.Hire(context.Background(), h.admin, bullpen.HireInput{Spec: &role}); err != nil {
		t.Fatal(err)
	}
	h.post(h.admin, h.general.ID, 0, "@clieng run echo hi")
	h.waitIdle()
	if got := box.calls(); len(got) != 1 {
		t.Errorf("after a CLI agent's turn, Warm calls = %q, want none for it", got)
	}
}

func hasTool(tools []string, name string) bool {
	for _, t := range tools {
		if t == name {
			return true
		}
	}
	return false
}
