package web_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/timeline"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/wiki"
	"github.com/chromedp/chromedp"
)

// gatedModel answers model calls one by one from a queue the test feeds,
// so the test decides when a turn moves on: each state of the live line
// holds until the test has seen it.
type gatedModel struct{ answers chan llm.Response }

func (g *gatedModel) answer(llm.Request) (llm.Response, error) {
	select {
	case r := <-g.answers:
		if r.StopReason == "fail" {
			return llm.Response{}, errors.New("the model fell over")
		}
		return r, nil
	case <-time.After(60 * time.Second):
		return llm.Response{}, errors.New("test gave no answer")
	}
}

// gatedWiki is the real wiki whose search for "gate" waits for the test
// (the work packet's own wiki search does not).
type gatedWiki struct {
	*wiki.Wiki
	search chan struct{}
}

func (w gatedWiki) SearchPages(ctx context.Context, actor bullpen.Member, q string, n int) ([]bullpen.WikiSearchHit, error) {
	if q == "gate" {
		<-w.search
	}
	return w.Wiki.SearchPages(ctx, actor, q, n)
}

type liveServer struct {
	*testServer
	model  *gatedModel
	search chan struct{}
	agents *agents.Service
}

func newLiveServer(t *testing.T) *liveServer {
	t.Helper()
	db, off, token := openOffice(t, store.SQLite)
	ls := &liveServer{model: &gatedModel{answers: make(chan llm.Response, 4)}, search: make(chan struct{}, 4)}
	w := wiki.New(db, wiki.Config{})
	model := scripted.New(ls.model.answer)
	model.DeltaDelay, model.WordsPerDelta = 300*time.Millisecond, 2 // a visible stream
	svc, err := agents.New(agents.Config{Office: off, DB: db, Providers: map[string]llm.Provider{"scripted": model},
		DefaultProvider: "scripted", Wiki: gatedWiki{Wiki: w, search: ls.search}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ls.agents = svc
	ls.testServer = serve(t, db, off, token, web.Config{}, web.Services{Office: off, Agents: svc, Wiki: w, Timeline: timeline.Lines{}},
		func() { close(ls.search); svc.Close() })
	return ls
}

// A mention, in headless Chromium against the real server: the message
// shows "@engineer is thinking…", then what the tool call is doing, then
// the streamed text, then the answer under the message, all without
// opening the thread; the answer is still there after a reload. A failed
// turn and a budget stop end the line with their reason.
func TestChatLiveLineBrowser(t *testing.T) {
	ls := newLiveServer(t) // first: it shuts down after the browser's checks
	ctx := browsertest.Browser(t, 2*time.Minute)
	browsertest.FailOnErrors(t, ctx)
	admin, err := ls.Off.Authenticate(context.Background(), ls.Token)
	if err != nil {
		t.Fatal(err)
	}
	hired, err := ls.agents.Hire(context.Background(), admin, bullpen.HireInput{Role: "starter/engineer"})
	if err != nil {
		t.Fatal(err)
	}
	b := newPage(t, ctx)
	b.login(ls.URL, ls.Token)

	b.run("ask", chromedp.SendKeys(b.q("composer-input"), "@engineer what is the launch plan?\n"))
	root := `document.querySelector('[data-testid="message-list"] > [data-testid="message"]:last-child')`
	status := root + `?.querySelector('[data-testid="live-status"]')`
	b.wait("thinking", status+`?.textContent === "@engineer is thinking…"`)

	ls.model.answers <- llm.Response{ToolCalls: []llm.ToolCall{{Name: bullpen.ToolWikiSearch, Arguments: []byte(`{"query":"gate"}`)}}}
	b.wait("searching", status+`?.textContent === "@engineer is searching the wiki"`)
	ls.search <- struct{}{}
	b.wait("back to thinking", status+`?.textContent === "@engineer is thinking…"`)

	ls.model.answers <- llm.Response{Text: "The launch plan says we ship on Friday after the last review."}
	b.wait("streamed text in place", root+`?.querySelector('[data-testid="live-text"]')?.textContent.includes("The launch")`)
	preview := root + `?.querySelector('[data-testid="reply-preview"]')`
	b.wait("the answer under the message", preview+`?.textContent.includes("ship on Friday")`)
	b.wait("the line ends", root+`?.querySelector('[data-testid="live-line"]').hidden`)
	if got := b.eval(preview + `?.querySelector('[data-testid="reply-preview-handle"]').textContent`); got != "@engineer" {
		t.Errorf("preview author = %q, want @engineer", got)
	}
	if got := b.eval(`String(document.querySelector('[data-testid="thread-pane"]').hidden)`); got != "true" {
		t.Error("the thread pane opened")
	}

	b.run("reload", chromedp.Reload())
	b.record()
	b.wait("the answer after a reload", preview+`?.textContent.includes("ship on Friday")`)

	// A failed turn says so on its message.
	b.run("ask again", chromedp.SendKeys(b.q("composer-input"), "@engineer and the rollback plan?\n"))
	b.wait("thinking again", status+`?.textContent === "@engineer is thinking…"`)
	ls.model.answers <- llm.Response{StopReason: "fail"}
	b.wait("failed", root+`?.querySelector('[data-testid="live-turn"][data-state="failed"]')?.textContent.includes("turn failed")`)

	// A budget stop: one model call allowed, the script wants a second.
	one := bullpen.Budgets{MaxSteps: 1}
	if _, err := ls.agents.Update(context.Background(), admin, hired.Agent.ID, bullpen.AgentUpdate{Budgets: &one}); err != nil {
		t.Fatal(err)
	}
	b.run("ask a long job", chromedp.SendKeys(b.q("composer-input"), "@engineer list everyone twice\n"))
	b.wait("thinking once more", status+`?.textContent === "@engineer is thinking…"`)
	ls.model.answers <- llm.Response{ToolCalls: []llm.ToolCall{{Name: bullpen.ToolListMembers, Arguments: []byte(`{}`)}}}
	b.wait("stopped by the budget", root+`?.querySelector('[data-testid="live-turn"][data-state="stopped"]')?.textContent === "@engineer stopped: step limit reached"`)
	b.wait("the timeline caught up", `document.querySelector('[data-testid="timeline-entry"]')?.dataset.seq === document.body.dataset.lastSeq`)
	b.shot("chat-live.png")
}
