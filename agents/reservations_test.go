package agents

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/gateway"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// inFlight counts the gateway's upstream requests in flight, and the most
// at once.
type inFlight struct {
	now, most atomic.Int64
}

func (f *inFlight) RoundTrip(r *http.Request) (*http.Response, error) {
	n := f.now.Add(1)
	for m := f.most.Load(); n > m && !f.most.CompareAndSwap(m, n); m = f.most.Load() {
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		f.now.Add(-1)
		return nil, err
	}
	resp.Body = &countedBody{ReadCloser: resp.Body, f: f}
	return resp, nil
}

type countedBody struct {
	io.ReadCloser
	f    *inFlight
	once sync.Once
}

func (b *countedBody) Close() error {
	b.once.Do(func() { b.f.now.Add(-1) })
	return b.ReadCloser.Close()
}

// multiAuth resolves "turn-<id>" tokens to the turn, for one agent.
type multiAuth struct{ m bullpen.Member }

func (a multiAuth) AuthenticateTurn(_ context.Context, secret string) (bullpen.Member, int64, error) {
	var id int64
	if _, err := fmt.Sscanf(secret, "turn-%d", &id); err != nil {
		return bullpen.Member{}, 0, bullpen.Errorf(bullpen.EUNAUTHORIZED, "bad token")
	}
	return a.m, id, nil
}

// budgetRig is the real gateway over HTTP, on the real service, in front of
// the Anthropic protocol fake, which answers every call with as much
// output as the request allows and counts the input as the gateway does.
type budgetRig struct {
	h    *harness
	fake *llmtest.FakeAnthropic
	gw   *httptest.Server
	tap  *inFlight
}

func newBudgetRig(t *testing.T, h *harness, agent bullpen.Member, cut func(llmtest.CapturedRequest) bool) *budgetRig {
	r := &budgetRig{h: h, tap: &inFlight{}}
	r.fake = llmtest.NewFakeAnthropic(func(c llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "spent", CutOff: cut(c),
			Usage: &llm.Usage{InputTokens: llm.Count(string(c.Raw)), OutputTokens: c.MaxTokens}}
	})
	t.Cleanup(r.fake.Close)
	r.gw = httptest.NewServer(gateway.New(gateway.Config{Auth: multiAuth{agent}, Turns: h.svc, Recorder: h.db, Transport: r.tap,
		Upstreams: staticUpstream{gateway.Upstream{Kind: gateway.KindAnthropic, BaseURL: r.fake.BaseURL(), APIKey: "sk-real"}}}))
	t.Cleanup(r.gw.Close)
	return r
}

// call makes one streamed call as a CLI would, retrying while the turn's
// call slots are taken (429 with Retry-After, retry allowed); it returns
// the final status.
func (r *budgetRig) call(t *testing.T, turnID int64, body string) int {
	for {
		req, _ := http.NewRequest(http.MethodPost, r.gw.URL+"/anthropic/v1/messages", strings.NewReader(body))
		req.Header.Set("X-Api-Key", fmt.Sprintf("turn-%d", turnID))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body) // a cut stream ends in an error here
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("X-Should-Retry") != "false" {
			if resp.Header.Get("Retry-After") == "" {
				t.Errorf("busy 429 without Retry-After")
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		return resp.StatusCode
	}
}

// forwarded sums the worst case of every request the provider saw: its
// input as counted plus the output it was allowed.
func (r *budgetRig) forwarded() (int, int) {
	sum := 0
	reqs := r.fake.Requests()
	for _, c := range reqs {
		sum += llm.Count(string(c.Raw)) + c.MaxTokens
	}
	return sum, len(reqs)
}

func callBody(i int) string {
	return fmt.Sprintf(`{"model":"m","max_tokens":4000,"stream":true,"messages":[{"role":"user","content":"call %d: write a long answer"}]}`, i)
}

// TestGatewayReservationsHoldTheBudget: 20 parallel calls and 20 streams
// cut short, from one CLI turn with a budget of 50,000 tokens, through the
// real gateway over HTTP. Every call reserves its worst case first and is
// clamped to what is left; a cut stream is charged its whole reservation.
// The recorded total stays within 2 % of the budget, the provider sees no
// request the budget could not pay for, none after it ran out, and never
// more than the turn's cap of calls at once.
func TestGatewayReservationsHoldTheBudget(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) { testReservationsHoldTheBudget(t, d) })
	}
}

func testReservationsHoldTheBudget(t *testing.T, dialect string) {
	const budget = 50_000
	h := newHarness(t, dialect, nil, nil)
	ctx := context.Background()
	pm := h.hireBudgeted(budget, 10_000_000)
	turn := h.claimTurn(pm)
	h.svc.attachGateway(&turnEnv{s: h.svc, turn: turn, agent: pm, channel: h.general, log: h.svc.log})
	r := newBudgetRig(t, h, pm, func(c llmtest.CapturedRequest) bool {
		return strings.Contains(fmt.Sprint(c.Messages), "cut")
	})
	var wg sync.WaitGroup
	statuses := make([]int, 40)
	for i := range statuses {
		body := callBody(i)
		if i%2 == 1 {
			body = strings.Replace(body, "write a long answer", "cut this stream", 1)
		}
		wg.Add(1)
		go func() { defer wg.Done(); statuses[i] = r.call(t, turn.ID, body) }()
	}
	wg.Wait()
	worst, seen := r.forwarded()
	for i := 0; i < 3; i++ { // the budget is spent: nothing more goes out
		if st := r.call(t, turn.ID, callBody(100+i)); st != http.StatusTooManyRequests {
			t.Errorf("call after the budget ran out = %d, want 429", st)
		}
	}
	if _, after := r.forwarded(); after != seen {
		t.Errorf("the provider saw %d requests after the budget ran out", after-seen)
	}
	row, _ := h.db.Turn(ctx, turn.ID)
	total := row.InputTokens + row.OutputTokens
	t.Logf("statuses %v; %d forwarded, worst case %d, recorded %d tokens, at most %d in flight", statuses, seen, worst, total, r.tap.most.Load())
	if limit := budget + budget*2/100; total > limit || worst > limit {
		t.Errorf("recorded %d tokens, forwarded a worst case of %d; budget %d (+2%% = %d)", total, worst, budget, limit)
	}
	if total < budget*9/10 {
		t.Errorf("recorded %d tokens: the budget of %d was not used (are calls charged?)", total, budget)
	}
	if most := r.tap.most.Load(); most > bullpen.DefaultMaxParallelCalls {
		t.Errorf("%d calls in flight at once, want at most %d", most, bullpen.DefaultMaxParallelCalls)
	}
	if n := h.limitEvents(0, bullpen.LimitTurnTokens); n != 1 {
		t.Errorf("limit events = %d, want 1", n)
	}
}

// TestGatewayDailyBudgetAcrossTurns: two turns of one agent running at
// once share its daily budget: their parallel calls reserve against the
// same day's count in the database, so together they stay within it.
func TestGatewayDailyBudgetAcrossTurns(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			const daily = 30_000
			h := newHarness(t, d, nil, nil)
			ctx := context.Background()
			pm := h.hireBudgeted(1_000_000, daily)
			one := h.claimTurn(pm)
			two := h.claimTurn(pm) // as a second replica would run it
			r := newBudgetRig(t, h, pm, func(llmtest.CapturedRequest) bool { return false })
			var wg sync.WaitGroup
			for i := 0; i < 24; i++ {
				turnID := one.ID
				if i%2 == 1 {
					turnID = two.ID
				}
				wg.Add(1)
				go func() { defer wg.Done(); r.call(t, turnID, callBody(i)) }()
			}
			wg.Wait()
			worst, seen := r.forwarded()
			day, err := h.db.UsageSince(ctx, pm.ID, time.Now().UTC().Truncate(24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			a, _ := h.db.Turn(ctx, one.ID)
			b, _ := h.db.Turn(ctx, two.ID)
			t.Logf("%d forwarded, worst case %d; day %d tokens (turns %d + %d)", seen, worst, day.Tokens,
				a.InputTokens+a.OutputTokens, b.InputTokens+b.OutputTokens)
			if limit := int64(daily + daily*2/100); day.Tokens > limit || int64(worst) > limit {
				t.Errorf("day's tokens %d, forwarded worst case %d; daily budget %d", day.Tokens, worst, daily)
			}
			if a.InputTokens == 0 || b.InputTokens == 0 {
				t.Errorf("a turn made no call: %d and %d input tokens", a.InputTokens, b.InputTokens)
			}
			if n := h.limitEvents(0, bullpen.LimitDailyTokens); n < 1 {
				t.Errorf("daily limit events = %d, want at least 1", n)
			}
		})
	}
}

// TestReservationSweep: a reservation whose call never settles (its
// process died mid-call) is charged at its full amount once its turn has
// ended or it expired, never dropped, and a late settle does not charge
// it twice.
func TestReservationSweep(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			h := newHarness(t, d, nil, nil)
			ctx := context.Background()
			pm := h.hireBudgeted(100_000, 1_000_000)
			turn := h.claimTurn(pm)
			b, res, err := h.svc.Reserve(ctx, turn.ID, 1000, 4000)
			if err != nil || b.Limit != "" || res.Output != 4000 {
				t.Fatalf("Reserve = %+v %+v %v", b, res, err)
			}
			if n, err := h.svc.SweepReservations(ctx); err != nil || n != 0 {
				t.Fatalf("sweep of a running turn's fresh reservation = %d, %v", n, err)
			}
			// The process dies: its turn is abandoned by the lease sweep.
			_, err = h.db.Transact(ctx, func(tx *store.Tx) error {
				_, err := tx.ReclaimTurns("another-owner", true)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if n, err := h.svc.SweepReservations(ctx); err != nil || n != 0 {
				t.Fatalf("sweep within the grace after the turn ended = %d, %v; want none", n, err)
			}
			var swept []store.Reservation
			_, err = h.db.Transact(ctx, func(tx *store.Tx) error { // the grace has passed
				swept, err = tx.SweepReservations(0)
				return err
			})
			if err != nil || len(swept) != 1 || swept[0].Input+swept[0].Output != 5000 {
				t.Fatalf("sweep = %+v, %v; want the reservation charged", swept, err)
			}
			row, _ := h.db.Turn(ctx, turn.ID)
			if row.State != bullpen.TurnAbandoned || row.InputTokens != 1000 || row.OutputTokens != 4000 {
				t.Errorf("abandoned turn = %s, %d in, %d out; want 1000 and 4000 charged", row.State, row.InputTokens, row.OutputTokens)
			}
			day, _ := h.db.UsageSince(ctx, pm.ID, time.Now().UTC().Truncate(24*time.Hour))
			if day.Tokens != 5000 {
				t.Errorf("day's tokens = %d, want the swept 5000", day.Tokens)
			}
			if err := h.svc.Settle(ctx, turn.ID, res, llm.Usage{InputTokens: 7, OutputTokens: 7}, true); err != nil {
				t.Fatal(err)
			}
			if again, _ := h.db.Turn(ctx, turn.ID); again.InputTokens != 1000 {
				t.Errorf("a late settle charged again: %d input tokens", again.InputTokens)
			}
		})
	}
}
