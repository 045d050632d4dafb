package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/chromedp/chromedp"
)

// shot is one page of `make screenshots`: where to go once logged in, and
// what to do there before the picture. Add a page by adding a row.
type shot struct {
	name string
	path string                    // from the server's root, e.g. "/" or "/settings"
	prep func(s *shooter) []string // JS steps to run after loading, each awaited
	// wait is a JS expression that is true once the page shows what the
	// picture is for.
	wait string
	// optional pages (another issue's) are skipped when they answer 404.
	optional bool
}

// sizes are the viewports of every picture; 800 wide shows the narrow fixes, 390 a phone.
var sizes = [][2]int64{{1400, 900}, {1024, 768}, {800, 700}, {390, 844}}

// tab opens a panel: from the bottom bar on a phone (where the panel tabs
// are hidden), else by its tab.
func tab(name string) string {
	return `(() => { const p = document.querySelector('[data-testid="phone-tab-` + name + `"]');
		(p && p.offsetParent ? p : document.querySelector('[data-testid="panel-tab-` + name + `"]')).click(); })()`
}

var shots = []shot{
	{name: "chat", path: "/", wait: `document.querySelectorAll('[data-testid="message-body"]').length >= 2`},
	{name: "timeline", path: "/", prep: func(*shooter) []string { return []string{tab("activity")} },
		wait: `document.querySelector('[data-testid="panel-activity"]') && !document.querySelector('[data-testid="panel-activity"]').hidden`},
	{name: "wiki", path: "/", prep: func(s *shooter) []string {
		return []string{tab("wiki"), `location.hash = "#wiki/` + s.wikiSlug + `"`}
	}, wait: `(document.querySelector('[data-testid="wiki-body"]') || {}).textContent`},
	{name: "sandbox", path: "/", prep: func(s *shooter) []string {
		return []string{tab("sandboxes"), `location.hash = "#sandbox=` + s.sandboxID + `&exec=` + s.execID + `"`}
	}, wait: `document.querySelectorAll('[data-testid="sandbox-exec"]').length > 0`},
	{name: "sandbox-full", path: "/", prep: func(s *shooter) []string {
		return []string{tab("sandboxes"), `location.hash = "#sandbox=` + s.sandboxID + `&exec=` + s.execID + `"`, `document.querySelector('[data-testid="panels-full"]').click()`,
			`document.querySelector('[data-testid="sandbox-terminal-open"]').click()`}
	}, wait: `document.body.classList.contains("panels-full") && document.querySelectorAll('[data-testid="sandbox-exec"]').length > 2 &&
		document.querySelector('[data-sandboxes]').dataset.terminal === "open"`},
	{name: "agents", path: "/", prep: func(*shooter) []string { return []string{tab("agents")} },
		wait: `document.querySelectorAll('[data-testid^="agent-status-"]').length > 0`},
	{name: "turn", path: "/turns/{turn}", optional: true, wait: `document.readyState === "complete"`},
	{name: "settings", path: "/settings", optional: true, wait: `document.readyState === "complete"`},
	{name: "telegram", path: "/telegram", wait: `document.querySelector('[data-testid="telegram-back"]') !== null`},
	{name: "tasks", path: "/tasks", optional: true, wait: `document.querySelector('[data-testid="tasks-board"]') !== null`},
	{name: "task", path: "/tasks/{task}", optional: true, wait: `document.querySelector('[data-testid="task-page"]') !== null`},
	{name: "task-new", path: "/tasks", optional: true, prep: func(*shooter) []string {
		return []string{`document.querySelector('[data-testid="task-create-open"]').click()`}
	}, wait: `document.querySelector('[data-testid="task-create"]').offsetParent !== null`},
	{name: "routines", path: "/routines", optional: true, wait: `document.querySelector('[data-testid="routine-list"]') !== null`},
	{name: "routine", path: "/routines/{routine}", optional: true, wait: `document.querySelector('[data-testid="routine-form"]') !== null`},
}

// shooter holds the seeded office the pictures show.
type shooter struct {
	t                        *testing.T
	m                        *Main
	api                      apiClient
	wikiSlug, sandboxID      string
	execID, turnID, dir, tok string
	taskID, routineID        string
}

// TestScreenshots writes docs/screenshots/*.png (make screenshots). It
// runs only with BULLPEN_SCREENSHOTS set to the output directory: it is a
// tool, not a check.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("BULLPEN_SCREENSHOTS")
	if dir == "" {
		t.Skip("set BULLPEN_SCREENSHOTS=docs/screenshots (make screenshots)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("screenshots show real sandboxes: run as root")
	}
	s := seedOffice(t)
	s.dir = dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := browsertest.Browser(t, 5*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.m.URL()+"login"), chromedp.WaitVisible(`[data-testid="login-token"]`),
		chromedp.SendKeys(`[data-testid="login-token"]`, s.tok), browsertest.Click(`[data-testid="login-submit"]`),
		chromedp.WaitVisible(`[data-testid="composer-input"]`)); err != nil {
		t.Fatalf("log in: %v", err)
	}
	for _, sh := range shots {
		for _, size := range sizes {
			s.take(ctx, sh, size)
		}
	}
}

// take makes one picture.
func (s *shooter) take(ctx context.Context, sh shot, size [2]int64) {
	s.t.Helper()
	path := strings.NewReplacer("{turn}", s.turnID, "{task}", s.taskID, "{routine}", s.routineID).Replace(sh.path)
	if sh.optional && s.status(path) == http.StatusNotFound {
		s.t.Logf("%s: %s is not served here; skipped", sh.name, path)
		return
	}
	steps := []chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(size[0], size[1]),
		chromedp.Evaluate[chromedp.Void](`localStorage.clear()`), chromedp.Navigate(s.m.URL() + strings.TrimPrefix(path, "/")),
		chromedp.WaitReady("body")}
	if sh.prep != nil {
		for _, js := range sh.prep(s) {
			steps = append(steps, chromedp.Sleep(300*time.Millisecond), chromedp.Evaluate[chromedp.Void](js))
		}
	}
	steps = append(steps, chromedp.Poll[chromedp.Void](`!!(`+sh.wait+`)`, chromedp.WithPollingTimeout(15*time.Second)),
		chromedp.Sleep(700*time.Millisecond))
	if err := chromedp.Do(ctx, steps...); err != nil {
		s.t.Errorf("%s at %dx%d: %v", sh.name, size[0], size[1], err)
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		s.t.Errorf("%s: capture: %v", sh.name, err)
		return
	}
	file := filepath.Join(s.dir, fmt.Sprintf("%s-%dx%d.png", sh.name, size[0], size[1]))
	if err := os.WriteFile(file, png, 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.t.Logf("wrote %s", file)
}

func (s *shooter) status(path string) int {
	req, _ := http.NewRequest("GET", s.m.URL()+strings.TrimPrefix(path, "/"), nil)
	req.Header.Set("Authorization", "Bearer "+s.tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// seedOffice starts `bullpen demo` (the scripted team in real sandboxes),
// hires the starter team, asks @lead for a build check and waits until
// @engineer has run its command and written the wiki page; then adds a
// few messages and commands of a person's own.
func seedOffice(t *testing.T) *shooter {
	t.Helper()
	var out strings.Builder
	m := NewMain(&out, io.Discard)
	if err := m.ParseFlags("demo", []string{"--data", t.TempDir(), "--addr", "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	m.Demo = true
	if err := m.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Cleanup(func() {
		if m.Sandboxes != nil {
			m.Sandboxes.Manager().TerminateAll(context.Background())
		}
		m.Close(context.Background())
	})
	s := &shooter{t: t, m: m, tok: tokenRE.FindString(out.String())}
	s.api = apiClient{t: t, base: m.URL() + "api/v1", token: s.tok}
	var roles struct{ Items []bullpen.RoleInfo }
	s.api.do("GET", "/roles", nil, http.StatusOK, &roles)
	for _, r := range roles.Items {
		if strings.HasPrefix(r.ID, "starter/") {
			s.api.do("POST", "/agents", map[string]string{"role": r.ID}, http.StatusCreated, nil)
		}
	}
	// A provider set up in Settings, for its picture (the demo itself
	// stays on the scripted model).
	s.api.do("POST", "/settings/providers", map[string]any{"name": "local-ollama", "kind": "openai",
		"base_url": "http://127.0.0.1:11434/v1", "api_key": "sk-local-example-1234", "model": "qwen3:8b", "is_default": true}, http.StatusCreated, nil)
	s.api.do("POST", "/channels/1/messages", map[string]string{"body": "Morning all. Release candidate goes out **today** — shout if anything blocks it."}, http.StatusCreated, nil)
	s.api.do("POST", "/channels/1/messages", map[string]string{"body": "@lead please check that our build machine works"}, http.StatusCreated, nil)
	s.waitForWork()
	s.seedTasks()
	// A person's own commands in the engineer's sandbox, beside the agent's.
	for _, cmd := range []string{"df -h / | tail -1", "ls /etc | head -5", "cat /nonexistent"} {
		s.api.do("POST", "/sandboxes/"+s.sandboxID+"/run", map[string]any{"cmd": []string{"/bin/sh", "-c", cmd}}, http.StatusOK, nil)
	}
	return s
}

// waitForWork polls the event log until the engineer's command and wiki
// page are stored, noting the ids the pictures link to.
func (s *shooter) waitForWork() {
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		var evs struct{ Items []bullpen.Event }
		s.api.do("GET", "/events?since=0&limit=1000", nil, http.StatusOK, &evs)
		for _, ev := range evs.Items {
			var p struct {
				ID     string `json:"id"`
				ExecID string `json:"exec_id"`
				Slug   string `json:"slug"`
				TurnID int64  `json:"turn_id"`
			}
			json.Unmarshal(ev.Payload, &p)
			switch ev.Type {
			case "sandbox.exec_finished":
				s.sandboxID, s.execID = p.ID, p.ExecID
			case bullpen.EventWikiPageSaved:
				s.wikiSlug = p.Slug
			}
			if p.TurnID != 0 {
				s.turnID = fmt.Sprint(p.TurnID)
			}
		}
		if s.execID != "" && s.wikiSlug != "" {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Fatalf("the demo team did not run a command and write a page in time (exec %q, page %q)", s.execID, s.wikiSlug)
}

// seedTasks adds a task with sub-tasks (one claimed, one waiting for
// review) and two routines, for the board, the task page and the routine
// pictures.
func (s *shooter) seedTasks() {
	var ms struct{ Items []bullpen.Member }
	s.api.do("GET", "/members", nil, http.StatusOK, &ms)
	id := map[string]int64{}
	for _, m := range ms.Items {
		id[m.Handle] = m.ID
	}
	var parent bullpen.Task
	s.api.do("POST", "/tasks", map[string]any{"title": "Ship the sign-up flow", "channel_id": 1, "labels": []string{"web", "release"},
		"body": "Sign-up with e-mail confirmation, behind the `signup` flag.", "review_human": true, "owner_id": id["lead"],
		"subtasks": []map[string]any{{"title": "API: POST /signup and the confirmation mail", "owner_id": id["engineer"], "labels": []string{"api"}},
			{"title": "Form and error states", "owner_id": id["designer"], "labels": []string{"web"}},
			{"title": "Release note and help page", "labels": []string{"docs"}}}}, http.StatusCreated, &parent)
	s.taskID = fmt.Sprint(parent.ID)
	s.api.do("POST", "/tasks", map[string]any{"title": "Rotate the staging database password", "channel_id": 1, "labels": []string{"ops"}},
		http.StatusCreated, nil)
	var r bullpen.Routine
	s.api.do("POST", "/routines", map[string]any{"name": "Morning triage", "cron": "0 9 * * 1-5", "tz": "Europe/Paris", "action": "wake",
		"channel_id": 1, "agent_id": id["lead"], "prompt": "Triage yesterday's new tasks and assign them.", "skip": "no_new_messages", "enabled": true},
		http.StatusCreated, &r)
	s.routineID = fmt.Sprint(r.ID)
	s.api.do("POST", "/routines", map[string]any{"name": "Weekly review", "interval_sec": 604800, "action": "task", "channel_id": 1,
		"task": map[string]any{"title": "Review the week", "labels": []string{"review"}}, "enabled": false}, http.StatusCreated, nil)
}
