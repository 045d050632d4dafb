package agents

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/store"
)

// The prompt's roster grows with the turn's channel, not the office: up
// to rosterFull members it lists everyone, whatever the channel (so the
// prompts of today's offices stay byte-identical); past that, the
// channel's members and a count of the others. list_members (no channel)
// still names everyone.
func TestRosterBoundedInLargeOffice(t *testing.T) {
	h := newHarness(t, store.SQLite, map[string]llm.Provider{}, nil)
	eng := h.hire("starter/engineer")
	ctx := context.Background()
	lines := func(r string) int { return strings.Count(r, "\n") }
	small := bullpen.Channel{MemberIDs: []int64{h.admin.ID, eng.ID}}
	full, err := h.svc.roster(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := h.svc.roster(ctx, &small); got != full {
		t.Errorf("a small office's roster depends on the channel:\n%s---\n%s", got, full)
	}
	var people []bullpen.Member
	for i := range 60 {
		m, err := h.off.CreateMember(ctx, h.admin, bullpen.MemberInput{Handle: fmt.Sprintf("p%02d", i), DisplayName: "P"})
		if err != nil {
			t.Fatal(err)
		}
		people = append(people, m)
	}
	full, _ = h.svc.roster(ctx, nil)
	total := lines(full)
	if total != 62 {
		t.Fatalf("list_members names %d members, want 62:\n%s", total, full)
	}
	ch := bullpen.Channel{MemberIDs: []int64{h.admin.ID, eng.ID, people[7].ID}}
	got, err := h.svc.roster(ctx, &ch)
	if err != nil {
		t.Fatal(err)
	}
	want := "@admin — " + h.admin.DisplayName + " (human)\n@engineer — " + eng.DisplayName + ", " + eng.Title + " (agent)\n@p07 — P (human)\n" +
		"(and 59 more members of the office, not in this channel: list_members names everyone)\n"
	if eng.Title == "" {
		want = strings.Replace(want, ", "+eng.Title, "", 1)
	}
	if got != want {
		t.Errorf("roster in a 3-member channel of a 62-member office:\n%s\nwant:\n%s", got, want)
	}
}
