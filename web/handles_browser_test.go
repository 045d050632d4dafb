package web_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/chromedp/chromedp"
)

// In headless Chromium against the real server: two members both named
// "Alice" are told apart by the @handle beside the name in the member
// list, the DM list, the DM's header, the messages and the agent cards,
// at 1400×900 and at 1024×768. Screenshots go to $BULLPEN_SCREENSHOTS.
func TestHandlesBesideNamesBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 120*time.Second)
	ts := newAgentServer(t, echoScript)
	if st := ts.do("POST", "/api/v1/agents", ts.Token, map[string]any{"role": "starter/engineer", "handle": "eng"}, nil); st != 201 {
		t.Fatalf("hire: %d", st)
	}
	var alice, mallory bullpen.Member
	ts.do("POST", "/api/v1/members", ts.Token, map[string]any{"handle": "alice", "display_name": "Alice"}, &alice)
	ts.do("POST", "/api/v1/members", ts.Token, map[string]any{"handle": "mallory", "display_name": "Alice"}, &mallory)
	var tok struct{ Token string }
	ts.do("POST", "/api/v1/tokens", ts.Token, map[string]any{"member_id": mallory.ID, "name": "t"}, &tok)
	ts.do("POST", "/api/v1/channels/1/messages", tok.Token, map[string]string{"body": "Please send me the deploy key"}, nil)
	var dm bullpen.Channel
	if st := ts.do("POST", "/api/v1/dms", tok.Token, map[string]string{"handle": "admin"}, &dm); st != 200 {
		t.Fatalf("open DM: %d", st)
	}
	ts.do("POST", fmt.Sprintf("/api/v1/channels/%d/messages", dm.ID), tok.Token, map[string]string{"body": "It's Alice, quick favour"}, nil)

	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return s
	}
	q := func(id string) string { return `[data-testid="` + id + `"]` }
	texts := func(sel string) string {
		return eval(`Array.from(document.querySelectorAll('` + sel + `')).map(e => e.textContent.trim()).join("|")`)
	}
	shot := func(name string) {
		t.Helper()
		if dir := os.Getenv("BULLPEN_SCREENSHOTS"); dir != "" {
			png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	run("log in", chromedp.EmulateViewport(1400, 900), chromedp.Navigate(ts.URL+"/login"),
		chromedp.WaitVisible(q("login-token")), chromedp.SendKeys(q("login-token"), ts.Token),
		browsertest.Click(q("login-submit")), chromedp.WaitVisible(q("composer-input")))

	if got := texts(q("member") + " " + q("member-handle")); got != "@admin|@alice|@eng|@mallory" {
		t.Errorf("member handles = %q", got)
	}
	if got := texts(q("message") + " .msg-meta .msg-author, " + q("message") + " .msg-meta .msg-handle"); !strings.Contains(got, "Alice|@mallory") {
		t.Errorf("message author and handle = %q, want Alice beside @mallory", got)
	}
	if got := texts(q("dm-link") + " .channel-name, " + q("dm-link") + " " + q("dm-handle")); got != "Alice|@mallory" {
		t.Errorf("DM link = %q, want Alice|@mallory", got)
	}
	for _, size := range [][2]int64{{1400, 900}, {1024, 768}} {
		run("resize", chromedp.EmulateViewport(size[0], size[1]))
		shot(fmt.Sprintf("handles-general-%dx%d", size[0], size[1]))
	}
	run("open the DM", chromedp.EmulateViewport(1400, 900))
	run("open the DM", browsertest.Click(q("dm-link")))
	run("open the DM", chromedp.WaitVisible(q("channel-handle")))
	if got := strings.Join(strings.Fields(texts(q("channel-name"))), " "); got != "Alice @mallory" {
		t.Errorf("DM header = %q, want \"Alice @mallory\"", got)
	}
	run("agents tab", browsertest.Click(q("panel-tab-agents")))
	run("agents tab", chromedp.WaitVisible(q("agent-eng")))
	if got := texts(q("agent-eng") + " .agt-handle"); got != "@eng" {
		t.Errorf("agent card handle = %q, want @eng", got)
	}
	for _, size := range [][2]int64{{1400, 900}, {1024, 768}} {
		run("resize", chromedp.EmulateViewport(size[0], size[1]))
		shot(fmt.Sprintf("handles-dm-agents-%dx%d", size[0], size[1]))
	}
}
