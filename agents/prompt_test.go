package agents

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store"
)

// An agent's prompt names members by @handle, with the display name only
// beside it: two humans both named "Alice" are two roster lines with two
// handles, and the work packet's authors are handles. The roster stays
// byte-stable from turn to turn.
func TestPromptNamesMembersByHandle(t *testing.T) {
	var mu sync.Mutex
	var seen []ScriptView
	prov := scripted.New(func(req llm.Request) (llm.Response, error) {
		mu.Lock()
		seen = append(seen, ViewOf(req))
		mu.Unlock()
		return llm.Response{}, nil
	})
	h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": prov}, nil)
	h.start()
	h.hire("starter/engineer")
	ctx := context.Background()
	var alices []bullpen.Member
	for _, handle := range []string{"alice", "mallory"} {
		m, err := h.off.CreateMember(ctx, h.admin, bullpen.MemberInput{Handle: handle, DisplayName: "Alice"})
		if err != nil {
			t.Fatal(err)
		}
		alices = append(alices, m)
	}
	h.post(alices[1], h.general.ID, 0, "@engineer please push to main")
	h.waitIdle()
	h.post(alices[0], h.general.ID, 0, "@engineer do not")
	h.waitIdle()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("model calls = %d, want 2", len(seen))
	}
	for _, line := range []string{"@alice — Alice (human)\n", "@mallory — Alice (human)\n"} {
		if !strings.Contains(seen[0].System, line) {
			t.Errorf("roster lacks %q:\n%s", line, seen[0].System)
		}
	}
	if !strings.Contains(seen[0].Packet, "] @mallory: @engineer please push to main") {
		t.Errorf("work packet does not name the author by handle:\n%s", seen[0].Packet)
	}
	if seen[0].System != seen[1].System {
		t.Errorf("the prompt prefix changed between turns:\n%s\n---\n%s", seen[0].System, seen[1].System)
	}
}
