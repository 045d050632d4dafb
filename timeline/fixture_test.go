package timeline_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"github.com/bullpen-hq/bullpen/wiki"
)

// TestMain lets the test binary serve as the sandboxes' init.
func TestMain(m *testing.M) {
	sandbox.MaybeRunInit()
	os.Exit(m.Run())
}

// office is the whole office on a real database: the office core, the
// real wiki, real sandboxes and the agents service, whose model is a
// script the test queues answers on.
type fixture struct {
	t       *testing.T
	db      *store.DB
	off     *office.Office
	wiki    *wiki.Wiki
	boxes   *sandboxes.Service
	agents  *agents.Service
	admin   bullpen.Member
	general bullpen.Channel

	mu    sync.Mutex
	steps []scripted.Step
	cfg   agents.Config
	hold  chan struct{} // a step with Text holdText waits for it
}

// holdText is a step that keeps its turn running until hold is closed.
const holdText = "(hold)"

func newFixture(t *testing.T) *fixture {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the real sandboxes need root")
	}
	ctx := context.Background()
	f := &fixture{t: t, hold: make(chan struct{})}
	var err error
	if f.db, err = store.Open(ctx, storetest.Config(t, store.SQLite)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.db.Close() })
	if f.off, err = office.New(ctx, f.db, office.Config{}); err != nil {
		t.Fatal(err)
	}
	tok, err := f.off.Bootstrap(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	if f.admin, err = f.off.Authenticate(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if f.general, err = f.off.ChannelByName(ctx, f.admin, bullpen.GeneralChannel); err != nil {
		t.Fatal(err)
	}
	f.wiki = wiki.New(f.db, wiki.Config{})
	f.openSandboxes(ctx)
	f.openAgents(ctx)
	return f
}

func (f *fixture) openSandboxes(ctx context.Context) {
	cfg := sandboxes.Config{Office: f.off, DB: f.db, Logger: quiet(),
		Sandbox: sandbox.Config{StateDir: f.t.TempDir(), CheckInterval: 100 * time.Millisecond}}
	var err error
	if f.boxes, err = sandboxes.Open(ctx, cfg); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		f.boxes.Manager().TerminateAll(ctx)
		f.boxes.Close()
	})
}

func (f *fixture) openAgents(ctx context.Context) {
	cat, err := agents.LoadCatalog("")
	if err != nil {
		f.t.Fatal(err)
	}
	model := scripted.New(f.answer)
	cfg := agents.Config{Office: f.off, DB: f.db, Catalog: cat, Providers: map[string]llm.Provider{"scripted": model},
		DefaultProvider: "scripted", Wiki: f.wiki, Sandboxes: f.boxes.Workspaces(time.Minute), Logger: quiet(),
		HopBudget: 1}
	f.cfg = cfg
	if f.agents, err = agents.New(cfg); err != nil {
		f.t.Fatal(err)
	}
	if err := f.agents.Start(ctx); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(f.agents.Close)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// script queues the model's next answers.
func (f *fixture) script(steps ...scripted.Step) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps = append(f.steps, steps...)
}

func (f *fixture) answer(llm.Request) (llm.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.steps) == 0 {
		return llm.Response{}, bullpen.Errorf(bullpen.EUNAVAILABLE, "script exhausted")
	}
	s := f.steps[0]
	f.steps = f.steps[1:]
	if s.Text == holdText {
		f.mu.Unlock()
		<-f.hold
		f.mu.Lock()
		return llm.Response{}, bullpen.Errorf(bullpen.EUNAVAILABLE, "held")
	}
	if s.Err != nil {
		return llm.Response{}, s.Err
	}
	return llm.Response{Text: s.Text, ToolCalls: s.ToolCalls}, nil
}

func call(name string, args any) scripted.Step {
	raw, _ := json.Marshal(args)
	return scripted.Step{ToolCalls: []llm.ToolCall{{Name: name, Arguments: raw}}}
}

func (f *fixture) post(actor bullpen.Member, channel, thread int64, body string) bullpen.Message {
	f.t.Helper()
	m, err := f.off.Post(context.Background(), actor, bullpen.PostInput{ChannelID: channel, ThreadID: thread, Body: body, Source: bullpen.SourceWeb})
	if err != nil {
		f.t.Fatalf("Post(%q): %v", body, err)
	}
	return m
}

// waitIdle waits until the router has seen every event and no wake is
// pending or running, and the sandboxes' events are stored.
func (f *fixture) waitIdle() {
	f.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for calm := 0; calm < 5; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			f.t.Fatal("agents not idle after 60 s")
		}
		p, c, err := f.db.InboxCounts(context.Background())
		if err != nil {
			f.t.Fatal(err)
		}
		if p == 0 && c == 0 && f.agents.Routed() >= f.off.Hub().Last() {
			calm++
		} else {
			calm = 0
		}
	}
}

// names resolves ids from the office, as the web layer does per request.
type names struct {
	members  map[int64]bullpen.Member
	channels map[int64]bullpen.Channel
}

func (f *fixture) names() names {
	f.t.Helper()
	ctx := context.Background()
	n := names{members: map[int64]bullpen.Member{}, channels: map[int64]bullpen.Channel{}}
	ms, err := f.off.Members(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, m := range ms {
		n.members[m.ID] = m
	}
	cs, err := f.off.Channels(ctx, f.admin)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, c := range cs {
		n.channels[c.ID] = c
	}
	return n
}

func (n names) MemberHandle(id int64) string { return n.members[id].Handle }

func (n names) ChannelName(id int64) (string, bool) {
	c, ok := n.channels[id]
	return c.Name, ok && c.Kind == bullpen.ChannelDM
}
