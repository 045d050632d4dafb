package agents

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/gateway"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// hireBudgeted hires a pm with the given token budgets.
func (h *harness) hireBudgeted(turnTokens, dailyTokens int) bullpen.Member {
	h.tb.Helper()
	role, _ := h.svc.Catalog().Role("starter/pm")
	role.Budgets.MaxTurnTokens, role.Budgets.DailyTokens = turnTokens, dailyTokens
	hired, err := h.svc.Hire(context.Background(), h.admin, bullpen.HireInput{Spec: &role})
	if err != nil {
		h.tb.Fatal(err)
	}
	return hired.Agent.Member
}

// claimTurn starts a running turn for the agent, as a CLI runtime's turn
// would be, without running the built-in loop.
func (h *harness) claimTurn(agent bullpen.Member) bullpen.Turn {
	h.tb.Helper()
	var turn bullpen.Turn
	_, err := h.db.Transact(context.Background(), func(tx *store.Tx) error {
		if _, err := tx.CreateWakes([]bullpen.Wake{{AgentID: agent.ID, ChannelID: h.general.ID, Reason: "mention"}}); err != nil {
			return err
		}
		var err error
		turn, _, err = tx.ClaimWakes(agent.ID, "test", time.Now().Add(time.Hour), 10)
		return err
	})
	if err != nil {
		h.tb.Fatal(err)
	}
	return turn
}

func (h *harness) limitEvents(since int64, limit string) int {
	n := 0
	for _, ev := range h.events(since) {
		if le, err := bullpen.LimitOf(ev); err == nil && ev.Type == bullpen.EventLimitReached && le.Limit == limit {
			n++
		}
	}
	return n
}

// TestGatewayTurnBudgets: the Turns side of the gateway uses the built-in
// loop's rules and texts: usage lands on the turn row, the per-turn and
// daily token budgets stop a CLI turn, the stop is announced once, and
// finishing the turn keeps the gateway's counts and ends it as limited.
func TestGatewayTurnBudgets(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) { testGatewayTurnBudgets(t, d) })
	}
}

func testGatewayTurnBudgets(t *testing.T, dialect string) {
	h := newHarness(t, dialect, nil, nil)
	ctx := context.Background()
	pm := h.hireBudgeted(2000, 3000)
	turn := h.claimTurn(pm)
	b, res, err := h.svc.Reserve(ctx, turn.ID, 100, 500)
	if err != nil || b.Limit != "" || b.AgentID != pm.ID || res.Input != 100 || res.Output != 500 {
		t.Fatalf("fresh turn reservation = %+v %+v, %v", b, res, err)
	}
	if err := h.svc.Settle(ctx, turn.ID, res, llm.Usage{InputTokens: 1500, CachedInputTokens: 1000, OutputTokens: 600}, true); err != nil {
		t.Fatal(err)
	}
	b, _, err = h.svc.Reserve(ctx, turn.ID, 100, 500)
	want := "@pm stopped: 2100 tokens used in one turn (limit 2000)."
	if err != nil || b.Limit != bullpen.LimitTurnTokens || b.Detail != want {
		t.Fatalf("spent turn budget = %+v, %v; want %s %q", b, err, bullpen.LimitTurnTokens, want)
	}
	since := h.off.Hub().Last()
	for i := 0; i < 3; i++ { // the CLI asks again and again
		if err := h.svc.BudgetStopped(ctx, turn.ID, b); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.limitEvents(since, bullpen.LimitTurnTokens); n != 1 {
		t.Errorf("limit events = %d, want 1", n)
	}
	if got := h.messages(since); len(got) != 1 || got[0] != "@pm: ⚠️ "+want {
		t.Errorf("notices = %q, want one %q", got, want)
	}
	// The CLI, refused, exits non-zero; its runtime fails the turn.
	e := &turnEnv{s: h.svc, turn: turn, agent: pm, channel: h.general, log: h.svc.log}
	h.svc.fail(ctx, e, bullpen.Errorf(bullpen.EINVALID, "the CLI exited with status 1"))
	done, _ := h.db.Turn(ctx, turn.ID)
	if done.State != bullpen.TurnDone || done.Error != "limit: "+bullpen.LimitTurnTokens || done.InputTokens != 1500 ||
		done.CachedInputTokens != 1000 || done.OutputTokens != 600 || done.Steps != 1 {
		t.Errorf("finished turn = %+v", done)
	}
	if _, _, err := h.svc.Reserve(ctx, turn.ID, 1, 1); !bullpen.IsCode(err, bullpen.EFORBIDDEN) {
		t.Errorf("reservation on an ended turn: err %v, want forbidden", err)
	}

	// The day's 2100 tokens count against the next turn: its call is
	// clamped to the 400 output tokens the day has left, and charged in
	// full when its answer is cut; then the day is spent.
	next := h.claimTurn(pm)
	b, res, err = h.svc.Reserve(ctx, next.ID, 500, 1000)
	if err != nil || b.Limit != "" || res.Output != 400 {
		t.Fatalf("clamped reservation = %+v %+v, %v; want 400 output tokens", b, res, err)
	}
	if err := h.svc.Settle(ctx, next.ID, res, llm.Usage{InputTokens: 500, OutputTokens: 1}, false); err != nil {
		t.Fatal(err)
	}
	b, _, err = h.svc.Reserve(ctx, next.ID, 10, 1000)
	if err != nil || b.Limit != bullpen.LimitDailyTokens || !strings.Contains(b.Detail, "3000 of 3000 tokens today") {
		t.Errorf("daily budget = %+v, %v", b, err)
	}
}

// TestGatewayWithService: the real gateway over the real service: a CLI
// turn's streamed calls are counted on its row until its budget is spent,
// then the CLI gets a 429 and the channel the built-in notice.
func TestGatewayWithService(t *testing.T) {
	h := newHarness(t, store.SQLite, nil, nil)
	ctx := context.Background()
	pm := h.hireBudgeted(1000, 100000)
	turn := h.claimTurn(pm)
	h.svc.attachGateway(&turnEnv{s: h.svc, turn: turn, agent: pm, channel: h.general, thread: 0, log: h.svc.log})
	f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "ok", Usage: &llm.Usage{InputTokens: 700, OutputTokens: 50}}
	})
	t.Cleanup(f.Close)
	gw := httptest.NewServer(gateway.New(gateway.Config{Auth: turnAuth{pm, turn.ID}, Turns: h.svc,
		Upstreams: staticUpstream{gateway.Upstream{Kind: gateway.KindAnthropic, BaseURL: f.BaseURL(), APIKey: "sk-real"}}}))
	t.Cleanup(gw.Close)
	since := h.off.Hub().Last()
	var statuses []int
	for i := 0; i < 3; i++ {
		req, _ := http.NewRequest(http.MethodPost, gw.URL+"/anthropic/v1/messages",
			strings.NewReader(`{"model":"m","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"go"}]}`))
		req.Header.Set("X-Api-Key", "turn-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body) // the answer ends once its usage is counted
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	row, _ := h.db.Turn(ctx, turn.ID)
	if statuses[0] != 200 || statuses[1] != 200 || statuses[2] != 429 || len(f.Requests()) != 2 {
		t.Errorf("statuses = %v with %d upstream calls; want 200 200 429 with 2", statuses, len(f.Requests()))
	}
	if row.InputTokens != 1400 || row.OutputTokens != 100 || row.Steps != 2 {
		t.Errorf("turn row = %d in, %d out, %d steps; want 1400, 100, 2", row.InputTokens, row.OutputTokens, row.Steps)
	}
	if n := h.limitEvents(since, bullpen.LimitTurnTokens); n != 1 || len(h.messages(since)) != 1 {
		t.Errorf("limit events %d, messages %q", n, h.messages(since))
	}
}

type turnAuth struct {
	m      bullpen.Member
	turnID int64
}

func (a turnAuth) AuthenticateTurn(_ context.Context, secret string) (bullpen.Member, int64, error) {
	if secret != "turn-token" {
		return bullpen.Member{}, 0, bullpen.Errorf(bullpen.EUNAUTHORIZED, "bad token")
	}
	return a.m, a.turnID, nil
}

type staticUpstream struct{ up gateway.Upstream }

func (s staticUpstream) Upstream(context.Context, bullpen.Member) (gateway.Upstream, error) {
	return s.up, nil
}

// TestGatewayUpstreams: an agent's calls go to its role's provider, or
// to the kind its CLI speaks, and an agent with neither is told so.
func TestGatewayUpstreams(t *testing.T) {
	h := newHarness(t, store.SQLite, nil, func(c *Config) { c.DefaultProvider = "openai" })
	ctx := context.Background()
	byKind := map[string]gateway.Upstream{gateway.KindAnthropic: {Kind: gateway.KindAnthropic, Name: "anthropic"}}
	ups := h.svc.GatewayUpstreams(LookupIn(byKind))
	hire := func(handle, provider, runtime string) bullpen.Member {
		role, _ := h.svc.Catalog().Role("starter/engineer")
		role.Handle, role.Provider, role.Runtime = handle, provider, runtime
		hired, err := h.svc.Hire(ctx, h.admin, bullpen.HireInput{Spec: &role})
		if err != nil {
			t.Fatal(err)
		}
		return hired.Agent.Member
	}
	tests := []struct {
		name, provider, runtime, want string
	}{
		{"claude code", "", bullpen.RuntimeClaudeCode, gateway.KindAnthropic},
		{"named provider", "anthropic", bullpen.RuntimeCodex, gateway.KindAnthropic},
		{"codex without openai", "", bullpen.RuntimeCodex, ""},
		{"default provider missing", "", "", ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := hire(fmt.Sprintf("eng%d", i), tt.provider, tt.runtime)
			up, err := ups.Upstream(ctx, m)
			if tt.want == "" {
				if !bullpen.IsCode(err, bullpen.EUNAVAILABLE) || !strings.Contains(bullpen.ErrorMessage(err), "BULLPEN_OPENAI_API_KEY") {
					t.Errorf("Upstream = %+v, %v; want unavailable", up, err)
				}
				return
			}
			if err != nil || up.Kind != tt.want {
				t.Errorf("Upstream = %+v, %v; want kind %s", up, err, tt.want)
			}
		})
	}
}
