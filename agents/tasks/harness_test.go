package tasks_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/tasks"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// clock is a test clock that only moves when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// fixture is an office with people, agents, a channel and the service.
type fixture struct {
	db      *store.DB
	off     *office.Office
	svc     *tasks.Service
	clock   *clock
	general bullpen.Channel
	admin   bullpen.Member
	ada     bullpen.Member // a person
	eng     bullpen.Member // an agent
	des     bullpen.Member // an agent
}

func newFixture(t testing.TB, cfg store.Config) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{clock: &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}}
	cfg.Now = f.clock.Now
	var err error
	if f.db, err = store.Open(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.db.Close() })
	if f.off, err = office.New(ctx, f.db, office.Config{Now: f.clock.Now}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.off.Bootstrap(ctx, "admin"); err != nil {
		t.Fatal(err)
	}
	if f.admin, err = f.db.MemberByHandle(ctx, "admin"); err != nil {
		t.Fatal(err)
	}
	if f.ada, err = f.off.CreateMember(ctx, f.admin, bullpen.MemberInput{Handle: "ada", DisplayName: "Ada", Kind: bullpen.KindHuman}); err != nil {
		t.Fatal(err)
	}
	f.eng, f.des = f.agent(t, "engineer"), f.agent(t, "designer")
	if f.general, err = f.off.ChannelByName(ctx, f.admin, bullpen.GeneralChannel); err != nil {
		t.Fatal(err)
	}
	f.svc = tasks.New(f.db, f.off, tasks.Config{Now: f.clock.Now, LeaseTTL: 10 * time.Minute})
	return f
}

// agent hires an agent member.
func (f *fixture) agent(t testing.TB, handle string) bullpen.Member {
	t.Helper()
	var m bullpen.Member
	_, err := f.db.Transact(context.Background(), func(tx *store.Tx) error {
		var err error
		if m, err = tx.CreateMember(bullpen.Member{Handle: handle, DisplayName: handle, Kind: bullpen.KindAgent}); err != nil {
			return err
		}
		_, err = tx.CreateAgent(bullpen.Agent{MemberID: m.ID, Role: handle, Spec: "{}"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// task creates a task in #general as actor.
func (f *fixture) task(t *testing.T, actor bullpen.Member, in bullpen.TaskInput) bullpen.Task {
	t.Helper()
	if in.ChannelID == 0 {
		in.ChannelID = f.general.ID
	}
	task, err := f.svc.Create(context.Background(), actor, in)
	if err != nil {
		t.Fatalf("Create(%q) = %v", in.Title, err)
	}
	return task
}

// lastSeq is the log's end, to see what a call wrote.
func (f *fixture) lastSeq(t *testing.T) int64 {
	t.Helper()
	seq, err := f.db.LastSeq(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// eventsSince lists the types of the events after seq.
func (f *fixture) eventsSince(t *testing.T, seq int64) []bullpen.Event {
	t.Helper()
	evs, err := f.db.EventsAfter(context.Background(), seq, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := bullpen.ErrorCode(err); got != code {
		t.Errorf("%s: error %v (code %q), want code %q", what, err, got, code)
	}
}

func openFixture(t *testing.T) *fixture { return newFixture(t, storetest.Config(t, store.SQLite)) }
