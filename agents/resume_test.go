package agents

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// stepModel answers step 0 with a tool call and hangs at step 1, so that
// closing the service stops the turn after the tool's effect and before
// the turn finishes: a crash at the worst moment.
type stepModel struct {
	first   llm.ToolCall
	hung    chan struct{}
	mu      sync.Mutex
	calls   int
	steps0  int
	lastOut string
}

func (*stepModel) Name() string { return "scripted" }

func (p *stepModel) Complete(ctx context.Context, req llm.Request, _ func(string)) (llm.Response, error) {
	v := ViewOf(req)
	p.mu.Lock()
	p.calls++
	if v.Steps == 0 {
		p.steps0++
	}
	p.lastOut = v.Last
	p.mu.Unlock()
	if v.Steps == 0 {
		return llm.Response{ToolCalls: []llm.ToolCall{p.first}}, nil
	}
	if p.hung != nil {
		p.hung <- struct{}{}
		<-ctx.Done()
		return llm.Response{}, ctx.Err()
	}
	return llm.Response{Text: "done"}, nil
}

func (p *stepModel) stats() (calls, steps0 int, last string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls, p.steps0, p.lastOut
}

// A crash between a tool's effect and the end of the turn: after the
// restart the turn resumes from its journal. The message is posted once,
// the model is not asked step 0 again, and the wake is answered once.
func TestResumeAfterCrashPostsOnce(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			first := call(bullpen.ToolPostMessage, map[string]any{"body": "the one reply"})
			p1 := &stepModel{first: first, hung: make(chan struct{}, 1)}
			h := newHarness(t, d, map[string]llm.Provider{"scripted": p1}, nil)
			lead := h.hire("starter/lead")
			h.start()
			since := h.off.Hub().Last()
			h.post(h.admin, h.general.ID, 0, "@lead please reply")
			<-p1.hung // the post is done; the turn waits on step 1
			h.close() // the crash: the turn stays running in the database

			p2 := &stepModel{first: first}
			h.open(map[string]llm.Provider{"scripted": p2}, nil)
			h.start()
			h.waitIdle()
			var replies int
			for _, m := range h.messages(since) {
				if strings.HasPrefix(m, "@"+lead.Handle+": ") {
					replies++
				}
			}
			if replies != 1 {
				t.Errorf("lead posted %d messages, want exactly 1: %q", replies, h.messages(since))
			}
			calls, steps0, last := p2.stats()
			if calls != 1 || steps0 != 0 {
				t.Errorf("after restart: %d model calls (%d at step 0), want 1 call and step 0 replayed", calls, steps0)
			}
			if !strings.Contains(last, `"message_id"`) {
				t.Errorf("resumed step saw tool result %q, want the recorded post_message result", last)
			}
		})
	}
}

// A sandbox command running when the server died is reported to the model
// as interrupted after the restart, and never run again.
func TestResumeReportsInterruptedCommand(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			first := call(bullpen.ToolSandboxExec, map[string]any{"command": "make deploy"})
			p1 := &stepModel{first: first}
			h := newHarness(t, d, map[string]llm.Provider{"scripted": p1}, nil)
			box := &blockingBox{fakeBox: h.box, started: make(chan struct{}, 1)}
			h.swap(func(c *Config) { c.Sandboxes = box })
			eng := h.hire("starter/engineer")
			h.start()
			h.post(h.admin, h.general.ID, 0, "@"+eng.Handle+" deploy")
			<-box.started
			h.close()

			p2 := &stepModel{first: first}
			h.open(map[string]llm.Provider{"scripted": p2}, func(c *Config) { c.Sandboxes = box })
			h.start()
			h.waitIdle()
			if n := box.count(); n != 1 {
				t.Errorf("the command ran %d times, want 1 (never re-run after a crash)", n)
			}
			_, steps0, last := p2.stats()
			if steps0 != 0 || !strings.Contains(last, "interrupted by a server restart") {
				t.Errorf("resumed turn: step 0 asked %d times, tool result %q; want replay and an interrupted report", steps0, last)
			}
		})
	}
}

// blockingBox is a fakeBox whose commands hang until the call is canceled.
type blockingBox struct {
	*fakeBox
	started chan struct{}
	mu      sync.Mutex
	n       int
}

func (b *blockingBox) Exec(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec, req bullpen.WorkspaceExec) (bullpen.WorkspaceResult, error) {
	b.mu.Lock()
	b.n++
	b.mu.Unlock()
	b.started <- struct{}{}
	<-ctx.Done()
	return bullpen.WorkspaceResult{}, ctx.Err()
}

func (b *blockingBox) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// A wiki write and the turn's record of it commit together: after a crash
// the resumed turn does not write the page again.
func TestResumeAfterCrashWritesWikiOnce(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			first := call(bullpen.ToolWikiWrite, map[string]any{"title": "Plan", "body": "v1", "base_revision": 0})
			p1 := &stepModel{first: first, hung: make(chan struct{}, 1)}
			h := newHarness(t, d, map[string]llm.Provider{"scripted": p1}, nil)
			w := &txWiki{memWiki: h.wiki, db: h.db}
			h.swap(func(c *Config) { c.Wiki = w })
			h.hire("starter/lead")
			h.start()
			h.post(h.admin, h.general.ID, 0, "@lead write the plan")
			<-p1.hung
			h.close()

			p2 := &stepModel{first: first}
			h.open(map[string]llm.Provider{"scripted": p2}, func(c *Config) { w.db = nil; c.Wiki = w })
			w.db = h.db
			h.start()
			h.waitIdle()
			if page, _ := h.wiki.ReadPage(context.Background(), h.admin, "Plan"); page.Revision != 1 || w.writes() != 1 {
				t.Errorf("page at revision %d after %d writes, want revision 1 written once", page.Revision, w.writes())
			}
			if _, steps0, last := p2.stats(); steps0 != 0 || !strings.Contains(last, `"revision":1`) {
				t.Errorf("resumed turn: step 0 asked %d times, saw %q; want the recorded write's result", steps0, last)
			}
		})
	}
}

// txWiki is a memWiki whose writes commit in a real database transaction
// together with the caller's rows, as the real wiki's do.
type txWiki struct {
	*memWiki
	db *store.DB
	mu sync.Mutex
	n  int
}

func (w *txWiki) WritePageWith(ctx context.Context, actor bullpen.Member, title, body string, base int,
	fn func(tx *store.Tx, p bullpen.WikiPage) error) (bullpen.WikiPage, error) {
	p := bullpen.WikiPage{Title: title, Body: body, Revision: base + 1}
	_, err := w.db.Transact(ctx, func(tx *store.Tx) error { return fn(tx, p) })
	if err != nil {
		return bullpen.WikiPage{}, err
	}
	w.mu.Lock()
	w.n++
	w.mu.Unlock()
	return w.memWiki.WritePage(ctx, actor, title, body, base)
}

func (w *txWiki) writes() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// A crash right after an effect committed, before anything else of the
// turn is recorded: only the effect's own transaction journaled it, and
// the resumed turn neither repeats it nor asks the model for step 0 again.
func TestResumeAfterCrashRightAfterEffect(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		for _, tc := range []struct {
			name string
			call llm.ToolCall
			role func(*bullpen.Role)
			want func(h *harness, w *txWiki) (int, string)
		}{
			{"post_message", call(bullpen.ToolPostMessage, map[string]any{"body": "once"}), nil,
				func(h *harness, _ *txWiki) (int, string) { return h.countBy("@lead: once"), "posts" }},
			{"approval request", call(bullpen.ToolPostMessage, map[string]any{"body": "needs a human"}),
				func(r *bullpen.Role) { r.Approvals = []string{bullpen.ToolPostMessage} },
				func(h *harness, _ *txWiki) (int, string) {
					as, err := h.db.Approvals(context.Background(), "", 10)
					if err != nil {
						h.tb.Fatal(err)
					}
					if n := h.countNotices("asks for approval"); n != 1 {
						h.tb.Errorf("%d approval notices, want 1", n)
					}
					return len(as), "approval requests"
				}},
			{"wiki write", call(bullpen.ToolWikiWrite, map[string]any{"title": "Plan", "body": "v1", "base_revision": 0}), nil,
				func(_ *harness, w *txWiki) (int, string) { return w.writes(), "wiki writes" }},
		} {
			t.Run(d+"/"+tc.name, func(t *testing.T) {
				p1 := &stepModel{first: tc.call}
				h := newHarness(t, d, map[string]llm.Provider{"scripted": p1}, nil)
				w := &txWiki{memWiki: h.wiki, db: h.db}
				h.swap(func(c *Config) { c.Wiki = w })
				crashed := make(chan struct{})
				h.svc.afterTool = func(ctx context.Context, key string) { close(crashed); <-ctx.Done() }
				r, err := h.svc.Catalog().Role("starter/lead")
				if err != nil {
					t.Fatal(err)
				}
				if tc.role != nil {
					tc.role(&r)
				}
				if _, err := h.svc.Hire(context.Background(), h.admin, bullpen.HireInput{Spec: &r}); err != nil {
					t.Fatal(err)
				}
				h.start()
				h.post(h.admin, h.general.ID, 0, "@lead go")
				<-crashed
				h.close()

				p2 := &stepModel{first: tc.call}
				h.open(map[string]llm.Provider{"scripted": p2}, func(c *Config) { c.Wiki = w })
				w.db = h.db
				h.start()
				h.waitIdle()
				if n, what := tc.want(h, w); n != 1 {
					t.Errorf("%d %s after the crash and restart, want exactly 1", n, what)
				}
				if _, steps0, _ := p2.stats(); steps0 != 0 {
					t.Errorf("the resumed turn asked the model for step 0 %d times, want it replayed", steps0)
				}
			})
		}
	}
}

// countBy counts messages rendered as "@handle: body" exactly.
func (h *harness) countBy(line string) int {
	n := 0
	for _, m := range h.messages(0) {
		if m == line {
			n++
		}
	}
	return n
}
