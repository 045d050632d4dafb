package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/chromedp/chromedp"
)

// In headless Chromium against the real server, with real sandboxes: open
// the Sandboxes tab, create a sandbox from the form, run `echo hello` from
// the command box and watch its output arrive, see a command run through
// the API show up live in the exec log, and use the file browser: see a
// file a command made, open it, upload one, delete it.
func TestBrowserSandboxes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("sandboxes need root")
	}
	tab := browsertest.Browser(t, 120*time.Second)
	m, out := startMain(t, t.TempDir())
	defer func() {
		if m.Sandboxes != nil {
			m.Sandboxes.Manager().TerminateAll(context.Background())
		}
		m.Close(context.Background())
	}()
	if m.Sandboxes == nil {
		t.Fatal("the server started without sandboxes")
	}
	token := tokenRE.FindString(out.String())

	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	waitFor := func(step, expr string) {
		t.Helper()
		if _, err := chromedp.Run(tab, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			text, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('[data-sandboxes]').innerText`))
			t.Fatalf("%s: waiting for %s: %v\npanel:\n%s", step, expr, err, text)
		}
	}
	const q = `document.querySelector`
	logHas := func(s string) string {
		return `Array.from(document.querySelectorAll('[data-testid="sandbox-exec-output"]')).some(e => e.textContent.includes(` + jsString(s) + `))`
	}

	run("log in",
		chromedp.Navigate(m.URL()),
		chromedp.WaitVisible(`[data-testid="login-token"]`),
		chromedp.SendKeys(`[data-testid="login-token"]`, token),
		browsertest.Click(`[data-testid="login-submit"]`),
		chromedp.WaitVisible(`[data-testid="composer-input"]`))
	run("open the Sandboxes tab and the create form",
		browsertest.Click(`[data-testid="panel-tab-sandboxes"]`),
		chromedp.WaitVisible(`[data-testid="sandbox-new"]`),
		browsertest.Click(`[data-testid="sandbox-new"]`),
		chromedp.WaitVisible(`[data-testid="sandbox-create-form"]`),
		chromedp.SendKeys(`[data-testid="sandbox-name"]`, "browser-box"),
		chromedp.SetValue(`[data-testid="sandbox-memory"]`, "256Mi"),
		chromedp.SendKeys(`[data-testid="sandbox-timeout"]`, "2h"),
		chromedp.SendKeys(`[data-testid="sandbox-ports"]`, "8000, 8001"),
		browsertest.Click(`[data-testid="sandbox-create-submit"]`),
		chromedp.WaitVisible(`[data-testid="sandbox-detail"]`))
	waitFor("sandbox running", q+`('[data-testid="sandbox-detail-state"]').textContent === "running" && `+
		q+`('[data-testid="sandbox-detail-name"]').textContent === "browser-box"`)
	waitFor("live feed", q+`('[data-sandboxes]').dataset.live === "open"`)

	run("run echo hello", chromedp.SendKeys(`[data-testid="sandbox-command-input"]`, "echo hello\n"))
	waitFor("hello in the log", logHas("hello\n"))
	waitFor("exit status", `Array.from(document.querySelectorAll('[data-testid="sandbox-exec-end"]')).some(e => !e.hidden && e.textContent.startsWith("exit 0"))`)
	n, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="sandbox-exec"]').length`))
	if err != nil || n != 1 {
		t.Errorf("%d exec blocks (%v), want 1: the stream and the feed must merge", n, err)
	}
	hello, _ := chromedp.Run(tab, chromedp.Evaluate[string](q+`('[data-testid="sandbox-exec-output"]').textContent`))
	if hello != "hello\n" {
		t.Errorf("output %q, want exactly one hello", hello)
	}

	// A command run by someone else (here: the API) shows live.
	req, _ := http.NewRequest("POST", m.URL()+"api/v1/sandboxes/browser-box/run", strings.NewReader(`{"cmd":"echo via-api; echo oops >&2"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("run through the API: %v %v", err, resp)
	}
	resp.Body.Close()
	waitFor("API command in the log", logHas("via-api")+` && `+logHas("oops"))

	// "Copy as curl" is a command that works as pasted (with the token in
	// the environment); the CLI and Go snippets name the same sandbox.
	run("open copy-as", browsertest.Click(`[data-testid="sandbox-copy-as"] summary`))
	curlCmd, _ := chromedp.Run(tab, chromedp.Evaluate[string](q+`('[data-testid="sandbox-copy-code"]').textContent`))
	sh := exec.Command("sh", "-c", curlCmd)
	sh.Env = append(os.Environ(), "BULLPEN_TOKEN="+token)
	if out, err := sh.CombinedOutput(); err != nil || !strings.Contains(string(out), "Linux") {
		t.Errorf("the copied curl command:\n%s\ngave %v:\n%s", curlCmd, err, out)
	}
	for _, lang := range []string{"cli", "go"} {
		run("copy as "+lang, browsertest.Click(`[data-testid="sandbox-copy-`+lang+`"]`))
		snippet, _ := chromedp.Run(tab, chromedp.Evaluate[string](q+`('[data-testid="sandbox-copy-code"]').textContent`))
		if !strings.Contains(snippet, "sb_") || !strings.Contains(snippet, "uname") {
			t.Errorf("copy as %s: %q, want the sandbox's ID and the command", lang, snippet)
		}
	}
	screenshot(t, tab, "sandbox-copy-as.png")

	// The form's timeout and ports reached the sandbox.
	var made struct {
		Timeout int64 // seconds
		Ports   []struct{ Port int }
	}
	if st := apiCall(t, m, token, "GET", "/api/v1/sandboxes/browser-box", nil, &made); st != 200 || made.Timeout != 7200 || len(made.Ports) != 2 || made.Ports[0].Port != 8000 {
		t.Errorf("the sandbox the form made: %d %+v, want a 2h timeout and ports 8000 and 8001", st, made)
	}

	// Files: a file a command made shows in the browser and opens.
	run("make a file", chromedp.SendKeys(`[data-testid="sandbox-command-input"]`, "echo from-the-browser > note.txt\n"))
	fileSel := `[data-testid="sandbox-file"][data-name="note.txt"] [data-testid="sandbox-file-open"]`
	waitFor("note.txt listed", q+`('`+fileSel+`') !== null`)
	run("open note.txt", browsertest.Click(fileSel))
	waitFor("note.txt shown", q+`('[data-testid="sandbox-file-text"]').textContent === "from-the-browser\n"`)

	screenshot(t, tab, "sandbox-detail.png")

	up := filepath.Join(t.TempDir(), "upload.txt")
	os.WriteFile(up, []byte("uploaded\n"), 0o644)
	run("upload", chromedp.SetUploadFiles(`[data-testid="sandbox-upload-input"]`, []string{up}))
	waitFor("upload listed", q+`('[data-testid="sandbox-file"][data-name="upload.txt"]') !== null`)
	del := `[data-testid="sandbox-file"][data-name="upload.txt"] [data-testid="sandbox-file-delete"]`
	run("delete (two clicks)", browsertest.Click(del), browsertest.Click(del))
	waitFor("upload gone", q+`('[data-testid="sandbox-file"][data-name="upload.txt"]') === null`)

	run("back to the list", browsertest.Click(`[data-testid="sandbox-back"]`))
	waitFor("list with usage", `Array.from(document.querySelectorAll('[data-testid="sandbox-item"]')).some(e => e.textContent.includes("browser-box") && e.querySelector('[data-testid="sandbox-item-usage"]').textContent.includes("mem "))`)
	screenshot(t, tab, "sandboxes.png")
}

// screenshot saves the tab to $BULLPEN_SCREENSHOTS/name when that is set.
func screenshot(t *testing.T, tab context.Context, name string) {
	dir := os.Getenv("BULLPEN_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name), png, 0o644)
	}
	if err != nil {
		t.Errorf("screenshot: %v", err)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
