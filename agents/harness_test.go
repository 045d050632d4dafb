package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/tasks"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// harness is an office with an agents service on a real database, an
// in-memory wiki and fake sandboxes.
type harness struct {
	tb      testing.TB
	cfg     store.Config
	db      *store.DB
	off     *office.Office
	svc     *Service
	admin   bullpen.Member
	general bullpen.Channel
	wiki    *memWiki
	box     *fakeBox
	tasks   *tasks.Service
}

func newHarness(tb testing.TB, dialect string, providers map[string]llm.Provider, mut func(*Config)) *harness {
	tb.Helper()
	return newHarnessOn(tb, storetest.Config(tb, dialect), providers, mut)
}

// newHarnessOn is newHarness on a given database.
func newHarnessOn(tb testing.TB, cfg store.Config, providers map[string]llm.Provider, mut func(*Config)) *harness {
	tb.Helper()
	h := &harness{tb: tb, cfg: cfg, wiki: newMemWiki(), box: newFakeBox()}
	h.open(providers, mut)
	ctx := context.Background()
	tok, err := h.off.Bootstrap(ctx, "admin")
	if err != nil {
		tb.Fatal(err)
	}
	if h.admin, err = h.off.Authenticate(ctx, tok); err != nil {
		tb.Fatal(err)
	}
	if h.general, err = h.off.ChannelByName(ctx, h.admin, bullpen.GeneralChannel); err != nil {
		tb.Fatal(err)
	}
	return h
}

// open opens the database, office and service (again, after a restart).
func (h *harness) open(providers map[string]llm.Provider, mut func(*Config)) {
	h.tb.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, h.cfg)
	if err != nil {
		h.tb.Fatal(err)
	}
	off, err := office.New(ctx, db, office.Config{})
	if err != nil {
		h.tb.Fatal(err)
	}
	cfg := Config{Office: off, DB: db, Providers: providers, DefaultProvider: "scripted", Wiki: h.wiki, Sandboxes: h.box,
		Tasks: tasks.New(db, off, tasks.Config{}), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mut != nil {
		mut(&cfg)
	}
	svc, err := New(cfg)
	if err != nil {
		h.tb.Fatal(err)
	}
	h.db, h.off, h.svc = db, off, svc
	h.wiki.db = db
	h.tasks, _ = cfg.Tasks.(*tasks.Service)
	h.tb.Cleanup(h.close)
}

// swap changes the service's backends after New (a test wrapping the
// harness's fakes). The tool parts hold their backends, so the registry
// is built again from the changed Config.
func (h *harness) swap(mut func(*Config)) {
	h.tb.Helper()
	mut(&h.svc.cfg)
	tools, err := builtinTools(h.svc.cfg)
	if err != nil {
		h.tb.Fatal(err)
	}
	h.svc.tools, h.svc.toolCalls.tools, h.svc.turnLoop.tools = tools, tools, tools
	h.svc.turnLoop.cfg = h.svc.cfg
}

func (h *harness) start() {
	h.tb.Helper()
	if err := h.svc.Start(context.Background()); err != nil {
		h.tb.Fatalf("Start: %v", err)
	}
}

func (h *harness) close() {
	h.svc.Close()
	h.db.Close()
}

func (h *harness) hire(role string) bullpen.Member {
	h.tb.Helper()
	hired, err := h.svc.Hire(context.Background(), h.admin, bullpen.HireInput{Role: role})
	if err != nil {
		h.tb.Fatalf("Hire(%s): %v", role, err)
	}
	return hired.Agent.Member
}

func (h *harness) post(actor bullpen.Member, channel, thread int64, body string) bullpen.Message {
	h.tb.Helper()
	m, err := h.off.Post(context.Background(), actor, bullpen.PostInput{ChannelID: channel, ThreadID: thread, Body: body, Source: bullpen.SourceWeb})
	if err != nil {
		h.tb.Fatalf("Post(%q): %v", body, err)
	}
	return m
}

// waitIdle waits until the router has seen every event and no wake is
// pending or running.
func (h *harness) waitIdle() {
	h.tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	calm := 0
	for time.Now().Before(deadline) {
		p, c, err := h.db.InboxCounts(context.Background())
		if err != nil {
			h.tb.Fatal(err)
		}
		if p == 0 && c == 0 && h.svc.Routed() >= h.off.Hub().Last() {
			if calm++; calm >= 3 {
				return
			}
		} else {
			calm = 0
		}
		time.Sleep(5 * time.Millisecond)
	}
	p, c, _ := h.db.InboxCounts(context.Background())
	h.tb.Fatalf("agents not idle after 30s: %d pending, %d claimed wakes, routed %d of %d", p, c, h.svc.Routed(), h.off.Hub().Last())
}

// events returns every stored event after since.
func (h *harness) events(since int64) []bullpen.Event {
	h.tb.Helper()
	evs, err := h.db.EventsAfter(context.Background(), since, 10000)
	if err != nil {
		h.tb.Fatal(err)
	}
	return evs
}

// messages returns the bodies of every message after since, as "@handle: body".
func (h *harness) messages(since int64) []string {
	var out []string
	handles := h.svc.dir.handles(context.Background())
	for _, ev := range h.events(since) {
		if ev.Type != bullpen.EventMessagePosted {
			continue
		}
		var m bullpen.Message
		json.Unmarshal(ev.Payload, &m)
		out = append(out, "@"+handles[m.AuthorID]+": "+strings.TrimPrefix(m.Body, simLabel))
	}
	return out
}

// memWiki is an in-memory Wiki. Its saves run the caller's hook in a
// transaction of db (the harness's database), as the real wiki's do.
type memWiki struct {
	mu    sync.Mutex
	pages map[string]bullpen.WikiPage
	by    map[string]string // title → author handle
	db    *store.DB
}

func newMemWiki() *memWiki {
	return &memWiki{pages: map[string]bullpen.WikiPage{}, by: map[string]string{}}
}

func (w *memWiki) SearchPages(ctx context.Context, actor bullpen.Member, q string, limit int) ([]bullpen.WikiSearchHit, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []bullpen.WikiSearchHit
	for _, p := range w.pages {
		for _, word := range strings.Fields(strings.ToLower(q)) {
			if len(word) > 3 && strings.Contains(strings.ToLower(p.Title+" "+p.Body), word) {
				out = append(out, bullpen.WikiSearchHit{Title: p.Title, Snippet: clip(p.Body, 100)})
				break
			}
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (w *memWiki) ReadPage(ctx context.Context, actor bullpen.Member, title string) (bullpen.WikiPage, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.pages[title]
	if !ok {
		return p, bullpen.Errorf(bullpen.ENOTFOUND, "no page %q", title)
	}
	return p, nil
}

func (w *memWiki) WritePage(ctx context.Context, actor bullpen.Member, title, body string, base int) (bullpen.WikiPage, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.pages[title]
	if p.Revision != base {
		return p, bullpen.Errorf(bullpen.ECONFLICT, "page %q is at revision %d, not %d", title, p.Revision, base)
	}
	p = bullpen.WikiPage{Title: title, Body: body, Revision: p.Revision + 1}
	w.pages[title] = p
	w.by[title] = actor.Handle
	return p, nil
}

// Write seeds a page, as WritePage does (tests that set up a wiki call it).
// WritePageWith saves a page together with fn, run in a transaction of
// db: fn's failure saves nothing.
func (w *memWiki) WritePageWith(ctx context.Context, actor bullpen.Member, title, body string, base int,
	fn func(tx *store.Tx, p bullpen.WikiPage) error) (bullpen.WikiPage, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.pages[title]
	if p.Revision != base {
		return p, bullpen.Errorf(bullpen.ECONFLICT, "page %q is at revision %d, not %d", title, p.Revision, base)
	}
	p = bullpen.WikiPage{Title: title, Body: body, Revision: p.Revision + 1}
	if fn != nil {
		if _, err := w.db.Transact(ctx, func(tx *store.Tx) error { return fn(tx, p) }); err != nil {
			return bullpen.WikiPage{}, err
		}
	}
	w.pages[title] = p
	w.by[title] = actor.Handle
	return p, nil
}

func (w *memWiki) Write(ctx context.Context, actor bullpen.Member, title, body string, base int) (bullpen.WikiPage, error) {
	return w.WritePage(ctx, actor, title, body, base)
}

// fakeBox is a Sandboxes that answers commands from a table.
type fakeBox struct {
	mu    sync.Mutex
	execs []string // "handle: command"
	files map[string]string
}

func newFakeBox() *fakeBox { return &fakeBox{files: map[string]string{}} }

func (b *fakeBox) Exec(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec, req bullpen.WorkspaceExec) (bullpen.WorkspaceResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.execs = append(b.execs, agent.Handle+": "+req.Command)
	if req.Command == "go version" {
		return bullpen.WorkspaceResult{Stdout: "go version go1.26.8 linux/amd64\n"}, nil
	}
	return bullpen.WorkspaceResult{Stdout: fmt.Sprintf("ran %q\n", req.Command)}, nil
}

func (b *fakeBox) ReadFile(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec, path string, limit int64) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.files[agent.Handle+":"+path]
	if !ok {
		return nil, bullpen.Errorf(bullpen.ENOTFOUND, "no file %s", path)
	}
	return []byte(f), nil
}

func (b *fakeBox) WriteFile(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec, path string, data []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.files[agent.Handle+":"+path] = string(data)
	return nil
}

func (b *fakeBox) ListFiles(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec, dir string) ([]bullpen.FileEntry, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []bullpen.FileEntry
	for k, v := range b.files {
		if name, ok := strings.CutPrefix(k, agent.Handle+":"); ok {
			out = append(out, bullpen.FileEntry{Name: name, Size: int64(len(v))})
		}
	}
	return out, nil
}
