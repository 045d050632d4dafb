package agents

import (
	"context"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/settings"
	"github.com/bullpen-hq/bullpen/store"
)

// With the provider settings as the source, each turn runs on the
// provider set up at its start: switching the default between two fake
// servers moves the next turn, with no restart. An agent edit naming a
// provider that is not set up is refused; deleting every provider makes
// the next turn say, in plain words, where to set one up.
func TestTurnsFollowProviderSettings(t *testing.T) {
	a, b := llmtest.NewFakeOpenAI(llmtest.Text("answer from A")), llmtest.NewFakeOpenAI(llmtest.Text("answer from B"))
	defer a.Close()
	defer b.Close()
	var set *settings.Service
	h := newHarness(t, store.SQLite, nil, func(c *Config) {
		var err error
		if set, err = settings.New(settings.Config{DB: c.DB}); err != nil {
			t.Fatal(err)
		}
		c.ProviderSource = set
	})
	ctx := context.Background()
	str := func(s string) *string { return &s }
	pa, err := set.Create(ctx, h.admin, bullpen.ProviderInput{Name: str("alpha"), Kind: str("openai"), BaseURL: str(a.BaseURL()), APIKey: str("ka")})
	if err != nil {
		t.Fatal(err)
	}
	pb, err := set.Create(ctx, h.admin, bullpen.ProviderInput{Name: str("beta"), Kind: str("openai"), BaseURL: str(b.BaseURL()), APIKey: str("kb")})
	if err != nil {
		t.Fatal(err)
	}
	lead := h.hire("starter/lead")
	h.start()
	ask := func(body string) string {
		t.Helper()
		since := h.off.Hub().Last()
		h.post(h.admin, h.general.ID, 0, body)
		h.waitIdle()
		msgs := h.messages(since)
		return strings.Join(msgs, " | ")
	}
	if got := ask("@lead first?"); !strings.Contains(got, "answer from A") {
		t.Fatalf("first turn: %s, want alpha's answer", got)
	}
	if _, err := set.Update(ctx, h.admin, pb.ID, bullpen.ProviderInput{IsDefault: func() *bool { v := true; return &v }()}); err != nil {
		t.Fatal(err)
	}
	if got := ask("@lead second?"); !strings.Contains(got, "answer from B") {
		t.Errorf("after switching the default: %s, want beta's answer", got)
	}
	if _, err := h.svc.Update(ctx, h.admin, lead.ID, bullpen.AgentUpdate{Provider: str("ghost")}); !bullpen.IsCode(err, bullpen.EINVALID) || !strings.Contains(err.Error(), "Settings") {
		t.Errorf("editing @lead onto an unknown provider: %v, want EINVALID pointing to Settings", err)
	}
	if _, err := h.svc.Update(ctx, h.admin, lead.ID, bullpen.AgentUpdate{Provider: str("alpha"), Runtime: str("nope")}); !bullpen.IsCode(err, bullpen.EINVALID) {
		t.Errorf("editing @lead onto runtime nope: %v, want EINVALID", err)
	}
	if _, err := h.svc.Update(ctx, h.admin, lead.ID, bullpen.AgentUpdate{Provider: str("alpha"), Runtime: str(bullpen.RuntimeBuiltin)}); err != nil {
		t.Fatal(err)
	}
	if got := ask("@lead third?"); !strings.Contains(got, "answer from A") {
		t.Errorf("after naming alpha on the agent: %s, want alpha's answer", got)
	}
	for _, id := range []int64{pa.ID, pb.ID} {
		if err := set.Delete(ctx, h.admin, id); err != nil {
			t.Fatal(err)
		}
	}
	got := ask("@lead fourth?")
	if !strings.Contains(got, `its model provider "alpha" is not set up`) || !strings.Contains(got, "Settings → Providers") {
		t.Errorf("with alpha deleted: %s, want a notice naming alpha and Settings", got)
	}
	if n := h.svc.Notice(ctx); !strings.Contains(n, "Settings → Providers") {
		t.Errorf("dashboard notice with no provider = %q", n)
	}
}
