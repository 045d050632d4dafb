package agents

import (
	"testing"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store"
)

// StartDemo hires the whole starter team and leaves the admin's request
// to the lead in #general (the service is not started, so nobody answers).
func TestStartDemo(t *testing.T) {
	h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": scripted.New(DemoScript)}, nil)
	if err := h.svc.StartDemo(t.Context()); err != nil {
		t.Fatal(err)
	}
	hired, err := h.svc.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	pack := h.svc.cat.Pack("starter")
	if len(pack) == 0 || len(hired) != len(pack) {
		t.Fatalf("hired %d agents, want the %d roles of the starter pack", len(hired), len(pack))
	}
	page, err := h.off.ListMessages(t.Context(), h.admin, h.general.ID, "", 50)
	if err != nil {
		t.Fatal(err)
	}
	var asked int
	for _, m := range page.Items {
		if m.Body == DemoRequest && m.AuthorID == h.admin.ID {
			asked++
		}
	}
	if asked != 1 {
		t.Errorf("#general holds the admin's demo request %d times, want once", asked)
	}
}
