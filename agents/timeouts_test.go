package agents

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/llm/openai"
	"github.com/bullpen-hq/bullpen/store"
)

const timeoutsRole = "---\nhandle: qa\nname: QA\ntools: [post_message]\n%s\n---\nYou test.\n"

func TestRoleTimeouts(t *testing.T) {
	r, err := ParseRole("qa.md", []byte(strings.Replace(timeoutsRole, "%s", "timeouts: {first_byte: 60s, idle: 30s, turn: 10m}", 1)))
	if err != nil {
		t.Fatalf("ParseRole: %v", err)
	}
	want := bullpen.Timeouts{FirstByte: bullpen.Duration(time.Minute), Idle: bullpen.Duration(30 * time.Second), Turn: bullpen.Duration(10 * time.Minute)}
	if r.Timeouts != want {
		t.Errorf("bullpen.Timeouts = %+v, want %+v", r.Timeouts, want)
	}
	b, _ := json.Marshal(r)
	var back bullpen.Role
	if err := json.Unmarshal(b, &back); err != nil || back.Timeouts != want {
		t.Errorf("JSON round trip = %+v, %v; want %+v", back.Timeouts, err, want)
	}
	for _, tc := range []struct{ name, yaml, field string }{
		{"not a duration", "timeouts: {idle: soon}", "timeouts"},
		{"too long", "timeouts: {turn: 48h}", "timeouts.turn"},
		{"negative", "timeouts: {first_byte: -1s}", "timeouts.first_byte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRole("qa.md", []byte(strings.Replace(timeoutsRole, "%s", tc.yaml, 1)))
			if err == nil || !strings.Contains(err.Error(), "qa.md") || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("ParseRole(%s) = %v, want an error naming qa.md and %s", tc.yaml, err, tc.field)
			}
		})
	}
}

func TestTimeoutsFromEnv(t *testing.T) {
	env := map[string]string{EnvFirstByteTimeout: "45s", EnvTurnDeadline: "5m"}
	got, err := TimeoutsFromEnv(func(k string) string { return env[k] })
	if err != nil || got.FirstByte != bullpen.Duration(45*time.Second) || got.Turn != bullpen.Duration(5*time.Minute) || got.Idle != 0 {
		t.Errorf("TimeoutsFromEnv = %+v, %v; want first byte 45s, turn 5m, the rest default", got, err)
	}
	env[EnvIdleTimeout] = "forever"
	if _, err := TimeoutsFromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), EnvIdleTimeout) {
		t.Errorf("TimeoutsFromEnv with a bad value = %v, want an error naming %s", err, EnvIdleTimeout)
	}
}

// A role's turn deadline ends a turn whose model never answers, with a
// visible notice, long before the first-byte timeout.
func TestTurnDeadlineEndsHungTurn(t *testing.T) {
	silent := llmtest.NewSilent()
	defer silent.Close()
	p := openai.New(openai.Config{BaseURL: silent.BaseURL(), Model: "hung", MaxRetries: -1})
	h := newHarness(t, store.SQLite, map[string]llm.Provider{"openai": p}, func(c *Config) {
		c.DefaultProvider = "openai"
		c.Timeouts = bullpen.Timeouts{FirstByte: bullpen.Duration(time.Minute)}
	})
	r, err := h.svc.Catalog().Role("starter/lead")
	if err != nil {
		t.Fatal(err)
	}
	r.Timeouts.Turn = bullpen.Duration(700 * time.Millisecond)
	hired, err := h.svc.Hire(context.Background(), h.admin, bullpen.HireInput{Spec: &r})
	if err != nil {
		t.Fatal(err)
	}
	h.start()
	start := time.Now()
	h.post(h.admin, h.general.ID, 0, "@lead are you there?")
	h.waitIdle()
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the turn ended after %s, want about its 700ms deadline", took)
	}
	if n := h.countNotices("ran for its whole deadline of 700ms"); n != 1 {
		t.Errorf("%d deadline notices, want 1: %q", n, h.messages(0))
	}
	turns, err := h.db.Turns(context.Background(), hired.Agent.Member.ID, 5)
	if err != nil || len(turns) != 1 || turns[0].State != bullpen.TurnDone || !strings.Contains(turns[0].Error, bullpen.LimitDeadline) {
		t.Errorf("turns = %+v, %v; want one done turn stopped by %s", turns, err, bullpen.LimitDeadline)
	}
}
