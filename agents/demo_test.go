package agents

import (
	"context"
	"strings"
	"testing"
	"time"

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

// The demo reacts to what a person asks, by keywords: tests and deploys
// go to the engineer, who runs a matching (harmless) command in its
// sandbox; a write-up goes to the PM, who writes a wiki page; the lead
// answers the person in kind each time.
func TestDemoReactsToKeywords(t *testing.T) {
	cases := []struct {
		name, ask, exec, wiki, answer string
	}{
		{"tests", "@lead can you run the tests?", "engineer: " + testCommand, "Test run", "the tests pass"},
		{"deploy", "@lead is it safe to deploy today?", "engineer: " + deployCommand, "Deploy check", "deploy dry-run is clean"},
		{"wiki", "@lead please put our onboarding steps on the wiki", "", "Notes", `pm wrote it up on the wiki page "Notes`},
		{"other", "@lead how is the build machine?", "engineer: uname -sr && echo checked", "Report", "checked it in a sandbox"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": scripted.New(DemoScript)}, nil)
			h.svc.HireTeam(t.Context(), h.admin, "starter")
			h.start()
			since := h.off.Hub().Last()
			h.post(h.admin, h.general.ID, 0, tc.ask)
			h.waitIdle()
			msgs := h.messages(since)
			if last := msgs[len(msgs)-1]; !strings.Contains(last, "@admin") || !strings.Contains(last, tc.answer) {
				t.Errorf("the lead's answer = %q, want it to @admin with %q (all: %q)", last, tc.answer, msgs)
			}
			h.box.mu.Lock()
			execs := append([]string{}, h.box.execs...)
			h.box.mu.Unlock()
			if tc.exec == "" && len(execs) != 0 || tc.exec != "" && (len(execs) != 1 || execs[0] != tc.exec) {
				t.Errorf("sandbox commands = %q, want %q", execs, tc.exec)
			}
			var titles []string
			h.wiki.mu.Lock()
			for title := range h.wiki.pages {
				titles = append(titles, title)
			}
			h.wiki.mu.Unlock()
			if len(titles) != 1 || !strings.HasPrefix(titles[0], tc.wiki) {
				t.Errorf("wiki pages = %q, want one titled %s …", titles, tc.wiki)
			}
		})
	}
}

// Paced holds each answer between its bounds, and gives up when the
// turn's context ends.
func TestPaced(t *testing.T) {
	p := Paced(scripted.New(DemoScript), 40*time.Millisecond, 60*time.Millisecond)
	start := time.Now()
	if _, err := p.Complete(t.Context(), llm.Request{}, nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Errorf("a paced answer took %v, want at least 40ms", d)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Paced(scripted.New(DemoScript), time.Hour, time.Hour).Complete(ctx, llm.Request{}, nil); err == nil {
		t.Errorf("a cancelled paced call returned no error")
	}
}

// The demo starts once, when first watched, and a second StartDemo (a
// restart on the same data) posts nothing again.
func TestDemoStartsWhenWatched(t *testing.T) {
	h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": scripted.New(DemoScript)}, nil)
	d := NewDemo(h.svc)
	if n, _ := h.db.CountMessages(t.Context(), 0); n != 0 {
		t.Fatalf("%d messages before anyone watched", n)
	}
	d.Watched()
	d.Watched()
	<-d.Started()
	if d.Err() != nil {
		t.Fatal(d.Err())
	}
	if err := h.svc.StartDemo(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n, _ := h.db.CountMessages(t.Context(), 0); n != 1 {
		t.Errorf("%d messages after two Watched and a second StartDemo, want the one request", n)
	}
}
