package web_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/chromedp/chromedp"
)

// steerTab is a logged-in tab whose expected refusals (a form the API
// answers with 4xx) are checked and taken off the tab's problems; any
// other problem still fails the test.
type steerTab struct {
	*tab
	url      string
	problems *browsertest.Problems
}

func newSteerTab(t *testing.T, url, token string, width, height int64) steerTab {
	t.Helper()
	ctx := browsertest.Browser(t, 3*time.Minute)
	b := steerTab{tab: &tab{t: t, ctx: ctx}, url: url, problems: browsertest.FailOnErrors(t, ctx)}
	b.run("log in", chromedp.EmulateViewport(width, height), chromedp.Navigate(url+"/login"), chromedp.WaitVisible(sel("login-token")),
		chromedp.SendKeys(sel("login-token"), token), browsertest.Click(sel("login-submit")), chromedp.WaitVisible(sel("composer-input")))
	return b
}

// set gives a field a value, as typing or choosing would.
func (b steerTab) set(id, value string) {
	b.t.Helper()
	v, _ := json.Marshal(value)
	b.run("set "+id, chromedp.Evaluate[chromedp.Void](`(() => { const e = `+q(id)+`; e.value = `+string(v)+`;
		e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); })()`))
}

func (b steerTab) click(id string) {
	b.t.Helper()
	b.run("click "+id, chromedp.Evaluate[chromedp.Void](q(id)+`.click()`))
}

// shows waits until the element id is visible and its text has want.
func (b steerTab) shows(id, want string) {
	b.t.Helper()
	w, _ := json.Marshal(want)
	b.waitFor(id+" shows "+want, `(() => { const e = `+q(id)+`; return !!e && !e.hidden && e.offsetParent !== null && e.textContent.includes(`+string(w)+`); })()`)
}

// arrives waits, across the navigation a click started, until expr
// holds on the page navigated to.
func (b steerTab) arrives(step, expr string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.readyState === "complete" && !!(`+expr+`)`))
		if err == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.t.Fatalf("%s: %s never held", step, expr)
}

// refused checks that the page's only problems are 4xx answers to path.
func (b steerTab) refused(path string) {
	b.t.Helper()
	url := regexp.QuoteMeta(b.url + path)
	want := regexp.MustCompile(`^(HTTP 4\d\d for ` + url + `|log error \(network\): Failed to load resource: the server responded with a status of 4\d\d \([A-Za-z ]+\) ` + url + `)$`)
	got := b.problems.Take()
	if len(got) == 0 {
		b.t.Errorf("expected the API to refuse %s; the page saw no refusal", path)
	}
	for _, g := range got {
		if !want.MatchString(g) {
			b.t.Errorf("browser: %s", g)
		}
	}
}

func getTask(ts *testServer, id int64) bullpen.Task {
	var t bullpen.Task
	ts.do("GET", fmt.Sprintf("/api/v1/tasks/%d", id), ts.Token, nil, &t)
	return t
}

func tasksTitled(ts *testServer, title string) []bullpen.Task {
	var all struct{ Items []bullpen.Task }
	ts.do("GET", "/api/v1/tasks?limit=500", ts.Token, nil, &all)
	var out []bullpen.Task
	for _, t := range all.Items {
		if t.Title == title {
			out = append(out, t)
		}
	}
	return out
}

// In real Chromium, at 1400×900 and on a phone (390×844): a task made on
// the board (a bad label first: refused inline, nothing made), another
// member's task arriving live, a lost claim naming the holder, then
// claim → submit → request changes without a note (refused) → approve,
// each checked in the API afterwards.
func TestTaskActionsBrowser(t *testing.T) {
	ts, eng, _, general := taskServer(t)
	var admin, engineer bullpen.Member
	ts.do("GET", "/api/v1/me", ts.Token, nil, &admin)
	ts.do("GET", "/api/v1/me", eng, nil, &engineer)
	var held bullpen.Task
	ts.do("POST", "/api/v1/tasks", ts.Token, map[string]any{"title": "Held by the engineer", "channel_id": general.ID}, &held)
	if st := ts.do("POST", fmt.Sprintf("/api/v1/tasks/%d/claim", held.ID), eng, nil, nil); st != 200 {
		t.Fatalf("engineer's claim = %d", st)
	}
	for _, size := range [][2]int64{{1400, 900}, {390, 844}} {
		title := fmt.Sprintf("Ship the login form at %d", size[0])
		b := newSteerTab(t, ts.URL, ts.Token, size[0], size[1])
		b.run("board", chromedp.Navigate(ts.URL+"/tasks"), chromedp.WaitVisible(sel("tasks-board")))
		b.waitFor("the live feed", `document.querySelector("main").dataset.ws === "open"`)

		b.click("task-create-open")
		b.set("task-create-title", title)
		b.set("task-create-labels", "Not A Label")
		b.set("task-create-review", "human")
		b.click("task-create-submit")
		b.shows("task-create-error", `label "Not"`)
		b.refused("/api/v1/tasks")
		if n := len(tasksTitled(ts, title)); n != 0 {
			t.Fatalf("a refused create made %d tasks", n)
		}
		b.set("task-create-labels", "web, login")
		b.click("task-create-submit")
		b.shows("task-create-done", title)
		made := tasksTitled(ts, title)
		if len(made) != 1 {
			t.Fatalf("after Create there are %d tasks titled %q", len(made), title)
		}
		task := made[0]
		if !slices.Equal(task.Labels, []string{"login", "web"}) || !task.ReviewHuman || task.ChannelID != general.ID ||
			task.CreatorID != admin.ID || task.State != bullpen.TaskOpen || task.OwnerID != 0 {
			t.Errorf("created task = %+v", task)
		}
		card := fmt.Sprintf(`[...document.querySelectorAll('[data-state="open"] [data-testid="task-card"]')].some(c => c.textContent.includes(%q))`, title)
		b.waitFor("the new card on the board", card)

		live := fmt.Sprintf("Filed by the engineer at %d", size[0])
		ts.do("POST", "/api/v1/tasks", eng, map[string]any{"title": live, "channel_id": general.ID}, nil)
		b.waitFor("another member's task, live", fmt.Sprintf(`%s.textContent.includes(%q)`, q("tasks-board"), live))
		b.shot(fmt.Sprintf("tasks-board-actions-%dx%d", size[0], size[1]))

		b.run("the held task", chromedp.Navigate(fmt.Sprintf("%s/tasks/%d", ts.URL, held.ID)), chromedp.WaitVisible(sel("task-actions")))
		b.click("task-claim-button")
		b.shows("task-claim-error", "Already claimed by @engineer")
		b.refused(fmt.Sprintf("/api/v1/tasks/%d/claim", held.ID))
		if got := getTask(ts, held.ID); got.OwnerID != engineer.ID || got.State != bullpen.TaskInProgress {
			t.Errorf("a lost claim changed the task: owner %d, state %s", got.OwnerID, got.State)
		}

		b.run("the new task", chromedp.Navigate(fmt.Sprintf("%s/tasks/%d", ts.URL, task.ID)), chromedp.WaitVisible(sel("task-actions")))
		b.waitFor("the live feed", `document.querySelector("main").dataset.ws === "open"`)
		b.click("task-claim-button")
		b.shows("task-state", "in_progress")
		b.shows("task-owner", "@admin")
		if got := getTask(ts, task.ID); got.OwnerID != admin.ID || got.State != bullpen.TaskInProgress {
			t.Errorf("after Claim: owner %d, state %s", got.OwnerID, got.State)
		}
		b.set("task-submit-note", "Form and API done")
		b.click("task-submit-button")
		b.shows("task-state", "in_review")
		if got := getTask(ts, task.ID); got.State != bullpen.TaskInReview {
			t.Errorf("after Submit: state %s", got.State)
		}
		b.click("task-request-changes")
		b.shows("task-review-error", "needs a note")
		b.refused(fmt.Sprintf("/api/v1/tasks/%d/review", task.ID))
		if got := getTask(ts, task.ID); got.State != bullpen.TaskInReview {
			t.Errorf("a refused review changed the state to %s", got.State)
		}
		b.shot(fmt.Sprintf("task-page-review-%dx%d", size[0], size[1]))
		b.click("task-approve")
		b.shows("task-state", "done")
		if got := getTask(ts, task.ID); got.State != bullpen.TaskDone || got.ClosedAt == nil {
			t.Errorf("after Approve: state %s, closed %v", got.State, got.ClosedAt)
		}
		b.shows("task-reopen-button", "Reopen")
	}
}

// The routine editor in real Chromium: a cron that never fires is refused
// with the API's message and makes nothing; a good one is created, then
// changed to an interval, turned off from the list and deleted (two
// clicks). On a phone, a routine that creates a task from a template.
func TestRoutineEditorBrowser(t *testing.T) {
	ts, _, _, general := taskServer(t)
	var engineer bullpen.Member
	var all struct{ Items []bullpen.Member }
	ts.do("GET", "/api/v1/members", ts.Token, nil, &all)
	for _, m := range all.Items {
		if m.Handle == "engineer" {
			engineer = m
		}
	}
	routines := func() []bullpen.Routine {
		var rs struct{ Items []bullpen.Routine }
		ts.do("GET", "/api/v1/routines", ts.Token, nil, &rs)
		return rs.Items
	}

	b := newSteerTab(t, ts.URL, ts.Token, 1400, 900)
	b.run("routines", chromedp.Navigate(ts.URL+"/tasks"), browsertest.Click(sel("routines-link")), chromedp.WaitVisible(sel("routines-empty")))
	b.mouseClick("new", sel("routine-new"))
	b.run("new", chromedp.WaitVisible(sel("routine-form")))
	b.set("routine-name-input", "Morning triage")
	b.set("routine-cron", "0 9 30 2 *")
	b.set("routine-tz", "Europe/Paris")
	b.set("routine-agent", fmt.Sprint(engineer.ID))
	b.set("routine-prompt", "Triage the new tasks")
	b.set("routine-skip-select", "no_new_messages")
	b.click("routine-save")
	b.shows("routine-error", `cron "0 9 30 2 *" never fires`)
	b.refused("/api/v1/routines")
	if rs := routines(); len(rs) != 0 {
		t.Fatalf("a refused routine was stored: %+v", rs)
	}
	b.shot("routine-editor-refused-1400x900")
	b.set("routine-cron", "0 9 * * 1-5")
	b.click("routine-save")
	b.arrives("the saved routine's page", `location.pathname !== "/routines/new" && !!`+q("routine-delete"))
	rs := routines()
	if len(rs) != 1 {
		t.Fatalf("after Create there are %d routines", len(rs))
	}
	r := rs[0]
	if r.Name != "Morning triage" || r.Cron != "0 9 * * 1-5" || r.TZ != "Europe/Paris" || r.Action != bullpen.RoutineWake ||
		r.AgentID != engineer.ID || r.Prompt != "Triage the new tasks" || r.Skip != bullpen.SkipNoNewMessages || !r.Enabled ||
		r.ChannelID != general.ID || r.NextRunAt == nil {
		t.Errorf("created routine = %+v", r)
	}
	b.waitFor("the next run shown", q("routine-runs")+`.textContent.includes("next 20")`)
	b.shot("routine-editor-1400x900")

	b.click("routine-kind-interval")
	b.set("routine-interval", "3600")
	b.click("routine-save")
	b.shows("routine-saved", "Saved.")
	if got := routines()[0]; got.IntervalSec != 3600 || got.Cron != "" || got.TZ != "" || got.Prompt != "Triage the new tasks" {
		t.Errorf("after the change to an interval: %+v", got)
	}

	b.run("the list", chromedp.Navigate(ts.URL+"/routines"), chromedp.WaitVisible(sel(fmt.Sprintf("routine-%d", r.ID))))
	b.waitFor("the live feed", `document.querySelector("main").dataset.ws === "open"`)
	row := q(fmt.Sprintf("routine-%d", r.ID))
	if txt := evalIn[string](b.tab, row+`.textContent`); !strings.Contains(txt, "every 1 hour") || !strings.Contains(txt, "wake @engineer") ||
		!strings.Contains(txt, "never run yet") {
		t.Errorf("the list row = %q", txt)
	}
	b.click(fmt.Sprintf("routine-toggle-%d", r.ID))
	b.waitFor("off", row+`.dataset.enabled === "off"`)
	if got := routines()[0]; got.Enabled {
		t.Error("after the switch the routine is still on")
	}
	b.shot("routines-list-1400x900")

	b.run("edit again", chromedp.Navigate(fmt.Sprintf("%s/routines/%d", ts.URL, r.ID)), chromedp.WaitVisible(sel("routine-delete")))
	b.click("routine-delete-button")
	if len(routines()) != 1 {
		t.Fatal("one click on Delete deleted the routine")
	}
	b.click("routine-delete-button")
	b.arrives("back on the list", `location.pathname === "/routines" && !!`+q("routines-empty"))
	if rs := routines(); len(rs) != 0 {
		t.Errorf("after Delete: %+v", rs)
	}

	p := newSteerTab(t, ts.URL, ts.Token, 390, 844)
	p.run("new on a phone", chromedp.Navigate(ts.URL+"/routines/new"), chromedp.WaitVisible(sel("routine-form")))
	p.set("routine-name-input", "Weekly review task")
	p.click("routine-kind-interval")
	p.set("routine-interval", "604800")
	p.set("routine-action", "task")
	p.waitFor("the template fields", q("routine-task-title")+`.offsetParent !== null && `+q("routine-prompt")+`.offsetParent === null`)
	p.set("routine-task-title", "Review the week")
	p.set("routine-task-labels", "review")
	p.shot("routine-editor-task-390x844")
	p.click("routine-save")
	p.arrives("the saved routine's page", `location.pathname !== "/routines/new" && !!`+q("routine-delete"))
	rs = routines()
	if len(rs) != 1 || rs[0].Action != bullpen.RoutineTask || rs[0].Task == nil || rs[0].Task.Title != "Review the week" ||
		!slices.Equal(rs[0].Task.Labels, []string{"review"}) || rs[0].IntervalSec != 604800 {
		t.Errorf("the phone's routine = %+v", rs)
	}
	p.shot("routine-editor-390x844")
}

// "Remember for @agent" on a message, in real Chromium at 1400×900 and
// 390×844: empty text is refused inline and stores nothing; then the
// message's text becomes a lesson of @eng whose source is the message.
func TestRememberBrowser(t *testing.T) {
	ts := newMemoryServer(t, "sqlite")
	var eng view.Hired
	ts.do("POST", "/api/v1/agents", ts.Token, map[string]any{"role": "starter/engineer", "handle": "eng"}, &eng)
	base := fmt.Sprintf("/api/v1/agents/%d/memory", eng.Agent.ID)
	entries := func() []bullpen.MemoryEntry {
		var es struct{ Items []bullpen.MemoryEntry }
		ts.do("GET", base, ts.Token, nil, &es)
		return es.Items
	}
	for i, size := range [][2]int64{{1400, 900}, {390, 844}} {
		text := fmt.Sprintf("The staging database is db-staging-%d; never run migrations there on Fridays", i+2)
		var msg bullpen.Message
		ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]any{"body": text}, &msg)
		b := newSteerTab(t, ts.URL, ts.Token, size[0], size[1])
		li := fmt.Sprintf(`document.querySelector('[data-testid="message"][data-id="%d"]')`, msg.ID)
		b.waitFor("the message, its scripts loaded", `document.readyState === "complete" && !!`+li)
		b.run("remember", chromedp.Evaluate[chromedp.Void](li+`.querySelector('[data-testid="message-remember"]').click()`))
		b.waitFor("the form", q("remember-form")+` && `+q("remember-agent")+fmt.Sprintf(`.value === "%d"`, eng.Agent.ID))
		if got := evalIn[string](b.tab, q("remember-text")+`.value`); got != text {
			t.Errorf("the form's text = %q, want the message's %q", got, text)
		}
		before := len(entries())
		b.set("remember-text", "  ")
		b.click("remember-save")
		b.shows("remember-error", "text is empty")
		b.refused(base)
		if n := len(entries()); n != before {
			t.Fatalf("a refused Remember stored an entry (%d → %d)", before, n)
		}
		b.set("remember-text", text)
		b.set("remember-kind", "lesson")
		b.shot(fmt.Sprintf("remember-form-%dx%d", size[0], size[1]))
		b.click("remember-save")
		b.shows("remember-done", "Remembered for @eng as a lesson")
		var found *bullpen.MemoryEntry
		for _, e := range entries() {
			if e.Text == text {
				found = &e
			}
		}
		if found == nil || found.Kind != bullpen.MemoryLesson || found.SourceKind != bullpen.MemorySourceMessage || found.SourceID != msg.ID {
			t.Errorf("after Remember the entry is %+v", found)
		}
		b.shot(fmt.Sprintf("remember-done-%dx%d", size[0], size[1]))
	}
}
