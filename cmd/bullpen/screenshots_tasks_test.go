package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/chromedp/chromedp"
)

// TestTaskScreenshots writes the Tasks board's and a task page's pictures
// into BULLPEN_TASK_SCREENSHOTS, from a small office with tasks in every
// column (no demo, no sandboxes): quicker than make screenshots.
func TestTaskScreenshots(t *testing.T) {
	dir := os.Getenv("BULLPEN_TASK_SCREENSHOTS")
	if dir == "" {
		t.Skip("set BULLPEN_TASK_SCREENSHOTS to a directory")
	}
	var out strings.Builder
	m := NewMain(&out, io.Discard)
	if err := m.ParseFlags("serve", []string{"--data", t.TempDir(), "--addr", "127.0.0.1:0", "--sandboxes=off"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	s := &shooter{t: t, m: m, tok: tokenRE.FindString(out.String()), dir: dir}
	s.api = apiClient{t: t, base: m.URL() + "api/v1", token: s.tok}
	for _, role := range []string{"starter/engineer", "starter/designer", "starter/pm"} {
		s.api.do("POST", "/agents", map[string]string{"role": role}, http.StatusCreated, nil)
	}
	s.api.do("POST", "/tasks", map[string]any{"title": "Ship the login feature", "channel_id": 1, "review_human": true,
		"body": "Users log in with a token.\n\n- API\n- form\n- spec", "labels": []string{"web", "q3"}, "when_subtasks_done": "close",
		"subtasks": []map[string]any{{"title": "Build the login API", "owner_id": 2, "labels": []string{"backend"}},
			{"title": "Design the login form", "owner_id": 3, "labels": []string{"design"}}, {"title": "Write the login spec", "owner_id": 4}}},
		http.StatusCreated, nil)
	for i, title := range []string{"Rotate the staging keys", "Fix flaky websocket test", "Update the onboarding page", "Retire the old dashboard"} {
		s.api.do("POST", "/tasks", map[string]any{"title": title, "channel_id": 1, "labels": []string{[]string{"ops", "ci", "docs", "web"}[i]}}, http.StatusCreated, nil)
	}
	s.api.do("PATCH", "/tasks/8", map[string]any{"state": "cancelled", "note": "no longer needed"}, http.StatusOK, nil)
	s.api.do("POST", "/tasks/5/claim", nil, http.StatusOK, nil)
	s.api.do("POST", "/tasks/5/submit", map[string]any{"note": "rotated"}, http.StatusOK, nil)
	s.api.do("POST", "/tasks/6/claim", nil, http.StatusOK, nil)
	s.api.do("PATCH", "/tasks/6", map[string]any{"state": "blocked", "note": "waits for CI"}, http.StatusOK, nil)
	ctx := browsertest.Browser(t, 3*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(m.URL()+"login"), chromedp.WaitVisible(`[data-testid="login-token"]`),
		chromedp.SendKeys(`[data-testid="login-token"]`, s.tok), browsertest.Click(`[data-testid="login-submit"]`),
		chromedp.WaitVisible(`[data-testid="composer-input"]`)); err != nil {
		t.Fatalf("log in: %v", err)
	}
	for _, sh := range shots {
		if sh.name != "tasks" && sh.name != "task" {
			continue
		}
		for _, size := range [][2]int64{{1400, 900}, {1024, 768}, {390, 844}} {
			s.take(ctx, sh, size)
		}
	}
}
