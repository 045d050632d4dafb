package main

import (
	"bytes"
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
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/chromedp/chromedp"
)

// startQuiet runs the program with sandboxes off and no provider
// environment, so that only what the test sets up exists.
func startQuiet(t *testing.T, cmd string, mut func(*Main)) (*Main, string) {
	t.Helper()
	for _, k := range []string{"BULLPEN_OPENAI_API_KEY", "BULLPEN_OPENAI_BASE_URL", "BULLPEN_ANTHROPIC_API_KEY",
		"BULLPEN_ANTHROPIC_OAUTH_TOKEN", "BULLPEN_PROVIDER"} {
		t.Setenv(k, "")
	}
	var out bytes.Buffer
	m := NewMain(&out, io.Discard)
	if err := m.ParseFlags(cmd, []string{"--data", t.TempDir(), "--addr", "127.0.0.1:0", "--sandboxes=false"}); err != nil {
		t.Fatal(err)
	}
	if mut != nil {
		mut(m)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m, tokenRE.FindString(out.String())
}

// apiCall sends a JSON request with a Bearer token and decodes the answer.
func apiCall(t *testing.T, m *Main, token, method, path string, in, out any) int {
	t.Helper()
	var body io.Reader
	if in != nil {
		raw, _ := json.Marshal(in)
		body = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, m.URL()+strings.TrimPrefix(path, "/"), body)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

// browserSteps returns run and waitFor helpers bound to a tab.
func browserSteps(t *testing.T, tab context.Context) (func(string, ...chromedp.Action[chromedp.Void]), func(string, string)) {
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	waitFor := func(step, expr string) {
		t.Helper()
		// Evaluated again and again rather than polled in the page, so
		// that the reload after each change does not break the wait. The
		// page must have finished loading too: its deferred scripts attach
		// the listeners that the next click needs.
		var err error
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			var ok bool
			if ok, err = chromedp.Run(tab, chromedp.Evaluate[bool](`(() => { try { return document.readyState === "complete" && !!(`+expr+`); } catch (e) { return false; } })()`)); err == nil && ok {
				return
			}
		}
		text, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("%s: waiting for %s (%v)\npage:\n%s", step, expr, err, text)
	}
	return run, waitFor
}

func login(run func(string, ...chromedp.Action[chromedp.Void]), m *Main, token string) {
	run("log in",
		chromedp.Navigate(m.URL()),
		chromedp.WaitVisible(`[data-testid="login-token"]`),
		chromedp.SendKeys(`[data-testid="login-token"]`, token),
		browsertest.Click(`[data-testid="login-submit"]`),
		chromedp.WaitVisible(`[data-testid="composer-input"]`))
}

// waitMessage polls the event log until a message by handle (in a
// channel or a thread) contains text.
func waitMessage(t *testing.T, m *Main, token, handle, text string) {
	t.Helper()
	waitMessages(t, m, token, handle, text, 1)
}

// waitMessages waits for n such messages.
func waitMessages(t *testing.T, m *Main, token, handle, text string, n int) {
	t.Helper()
	var seen []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var evs struct{ Items []bullpen.Event }
		apiCall(t, m, token, "GET", "/api/v1/events?since=0&limit=1000", nil, &evs)
		seen = seen[:0]
		found := 0
		for _, ev := range evs.Items {
			if ev.Type != bullpen.EventMessagePosted {
				continue
			}
			var msg bullpen.Message
			json.Unmarshal(ev.Payload, &msg)
			if msg.Author == nil {
				continue
			}
			seen = append(seen, "@"+msg.Author.Handle+": "+msg.Body)
			if msg.Author.Handle == handle && strings.Contains(msg.Body, text) {
				found++
			}
		}
		if found >= n {
			return
		}
	}
	t.Fatalf("no message by @%s with %q; messages:\n%s", handle, text, strings.Join(seen, "\n"))
}

func sel(id string) string { return `[data-testid="` + id + `"]` }

// keyedText answers only requests with the right key, like a real vendor.
func keyedText(key, text string) llmtest.Handler {
	return func(r llmtest.CapturedRequest) llmtest.Reply {
		if r.Header.Get("Authorization") != "Bearer "+key {
			return llmtest.Reply{Status: http.StatusUnauthorized, Message: "Incorrect API key provided: sk-...wrong"}
		}
		return llmtest.Reply{Text: text}
	}
}

// In Chromium against the real server, an admin adds two providers on
// the Settings page; "Test connection" with a wrong key shows the
// provider's own 401 text; after the key is fixed and the second provider
// is made the default, the agent's very next turn goes to it — no restart.
// No secret ever appears in the page.
func TestBrowserProviderSwitchWithoutRestart(t *testing.T) {
	const keyA, keyB = "sk-alpha-0000111122223333", "sk-beta-4444555566667777"
	fakeA, fakeB := llmtest.NewFakeOpenAI(keyedText(keyA, "reply from A")), llmtest.NewFakeOpenAI(keyedText(keyB, "reply from B"))
	defer fakeA.Close()
	defer fakeB.Close()
	tab := browsertest.Browser(t, 120*time.Second)
	m, token := startQuiet(t, "serve", nil)
	browsertest.FailOnErrors(t, tab) // after the server starts: its check runs before the server stops
	run, waitFor := browserSteps(t, tab)
	login(run, m, token)

	addProvider := func(name, base, key string) {
		t.Helper()
		run("add "+name,
			chromedp.Navigate(m.URL()+"settings"),
			chromedp.WaitVisible(sel("provider-form")),
			chromedp.SendKeys(sel("provider-name"), name),
			chromedp.SetValue(sel("provider-kind"), "openai"),
			chromedp.SendKeys(sel("provider-base-url"), base),
			chromedp.SendKeys(sel("provider-api-key"), key),
			browsertest.Click(sel("provider-save")))
		waitFor(name+" listed", `document.querySelector('`+sel("provider-"+name)+`') !== null`)
	}
	addProvider("alpha", fakeA.BaseURL(), keyA)
	waitFor("alpha is the default", `document.querySelector('`+sel("provider-default-alpha")+`') !== null`)

	var hired view.Hired
	if st := apiCall(t, m, token, "POST", "/api/v1/agents", map[string]any{"role": "starter/lead"}, &hired); st != 201 {
		t.Fatalf("hire lead = %d", st)
	}
	apiCall(t, m, token, "POST", "/api/v1/channels/1/messages", map[string]any{"body": "@lead first question"}, nil)
	waitMessage(t, m, token, "lead", "reply from A")

	addProvider("beta", fakeB.BaseURL(), "sk-wrong-key-000000000")
	run("test beta", browsertest.Click(sel("provider-test-beta")))
	waitFor("the provider's 401 shows", `document.querySelector('`+sel("provider-result-beta")+`').textContent.includes("Incorrect API key provided")`)

	run("fix beta's key",
		browsertest.Click(sel("provider-edit-beta")),
		chromedp.SendKeys(sel("provider-api-key"), keyB),
		browsertest.Click(sel("provider-save")))
	waitFor("reloaded after the edit", `document.querySelector('`+sel("provider-form-title")+`').textContent === "Add a provider"`)
	run("test beta again", browsertest.Click(sel("provider-test-beta")))
	waitFor("beta connects", `document.querySelector('`+sel("provider-result-beta")+`').textContent.startsWith("✓ Connected")`)
	run("make beta the default", browsertest.Click(sel("provider-make-default-beta")))
	waitFor("beta is the default", `document.querySelector('`+sel("provider-default-beta")+`') !== null && document.querySelector('`+sel("provider-default-alpha")+`') === null`)

	html, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	for _, k := range []string{keyA, keyB} {
		if strings.Contains(html, k) || !strings.Contains(html, "…"+k[len(k)-4:]) {
			t.Errorf("the page shows the key %s, or not its hint", k[:8])
		}
	}
	screenshot(t, tab, "settings.png")

	before := len(fakeA.Requests())
	apiCall(t, m, token, "POST", "/api/v1/channels/1/messages", map[string]any{"body": "@lead second question"}, nil)
	waitMessage(t, m, token, "lead", "reply from B")
	if n := len(fakeA.Requests()); n != before {
		t.Errorf("the old default got %d more requests after the switch", n-before)
	}

	// The agent edit form offers the providers set up here and the
	// runtimes; picking alpha for @lead moves its next turn back to A.
	apiCall(t, m, token, "POST", "/api/v1/agents", map[string]any{"role": "starter/pm"}, nil)
	run("open the Agents tab", chromedp.Navigate(m.URL()), chromedp.WaitVisible(sel("composer-input")), browsertest.Click(sel("panel-tab-agents")))
	waitFor("lead listed", `document.querySelector('`+sel("agent-edit-lead")+`') !== null`)
	run("edit lead", browsertest.Click(sel("agent-edit-lead")))
	waitFor("providers offered", `document.querySelector('`+sel("agent-edit-provider-lead")+` option[value="alpha"]') !== null && document.querySelector('`+sel("agent-edit-provider-lead")+` option[value="beta"]') !== null`)
	run("pick alpha", chromedp.SetValue(sel("agent-edit-provider-lead"), "alpha"), browsertest.Click(sel("agent-edit-save-lead")))
	waitFor("saved", `document.querySelector('`+sel("agent-edit-form-lead")+`').hidden && document.querySelector('`+sel("agent-lead")+` .agt-meta').textContent.includes("alpha")`)
	run("edit pm's runtime", browsertest.Click(sel("agent-edit-pm")))
	waitFor("runtimes offered", `document.querySelector('`+sel("agent-edit-runtime-pm")+` option[value="codex"]') !== null`)
	run("pick codex", chromedp.SetValue(sel("agent-edit-runtime-pm"), "codex"), browsertest.Click(sel("agent-edit-save-pm")))
	waitFor("pm saved", `document.querySelector('`+sel("agent-edit-form-pm")+`').hidden`)
	var list struct{ Items []bullpen.AgentView }
	apiCall(t, m, token, "GET", "/api/v1/agents", nil, &list)
	for _, a := range list.Items {
		if a.Handle == "lead" && (a.Spec.Provider != "alpha" || a.Spec.Runtime != "") || a.Handle == "pm" && a.Spec.Runtime != "codex" {
			t.Errorf("@%s spec: provider %q runtime %q after the edits", a.Handle, a.Spec.Provider, a.Spec.Runtime)
		}
	}
	apiCall(t, m, token, "POST", "/api/v1/channels/1/messages", map[string]any{"body": "@lead third question"}, nil)
	waitMessages(t, m, token, "lead", "reply from A", 2)
	last := fakeA.Requests()[len(fakeA.Requests())-1]
	if !strings.Contains(string(last.Raw), "third question") {
		t.Errorf("A's last request is not the third question's turn")
	}
}

// An admin revokes another member's token on the Settings page; that
// token then gets 401 from the API.
func TestBrowserAdminRevokesMemberToken(t *testing.T) {
	tab := browsertest.Browser(t, 90*time.Second)
	m, token := startQuiet(t, "serve", func(m *Main) {
		dir := filepath.Join(m.DataDir, "roles")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "broken.md"), []byte("---\nhandle: broken\nname: Broken\ntools: [teleport]\n---\nYou break.\n"), 0o644)
	})
	browsertest.FailOnErrors(t, tab) // after the server starts: its check runs before the server stops
	var bob bullpen.Member
	if st := apiCall(t, m, token, "POST", "/api/v1/members", map[string]any{"handle": "bob", "display_name": "Bob", "kind": "human"}, &bob); st != 201 {
		t.Fatalf("create bob = %d", st)
	}
	var tok struct {
		ID     int64  `json:"id"`
		Secret string `json:"token"`
	}
	if st := apiCall(t, m, token, "POST", "/api/v1/tokens", map[string]any{"member_id": bob.ID, "name": "bob's laptop"}, &tok); st != 201 {
		t.Fatalf("token for bob = %d", st)
	}
	if st := apiCall(t, m, tok.Secret, "GET", "/api/v1/me", nil, nil); st != 200 {
		t.Fatalf("bob's token = %d before the revoke", st)
	}
	run, waitFor := browserSteps(t, tab)
	login(run, m, token)
	row := fmt.Sprintf("token-%d", tok.ID)
	run("open settings", chromedp.Navigate(m.URL()+"settings"), chromedp.WaitVisible(sel(row)))
	waitFor("bob's token listed as used", `document.querySelector('`+sel(row)+`').dataset.handle === "bob" && document.querySelector('`+sel(fmt.Sprintf("token-used-%d", tok.ID))+`').textContent !== "never"`)
	revoke := sel(fmt.Sprintf("token-revoke-%d", tok.ID))
	run("revoke (two clicks)", browsertest.Click(revoke), browsertest.Click(revoke))
	waitFor("shown revoked", `document.querySelector('`+sel(fmt.Sprintf("token-revoked-%d", tok.ID))+`') !== null`)
	if st := apiCall(t, m, tok.Secret, "GET", "/api/v1/me", nil, nil); st != 401 {
		t.Errorf("bob's revoked token = %d, want 401", st)
	}
	if st := apiCall(t, m, token, "GET", "/api/v1/me", nil, nil); st != 200 {
		t.Errorf("the admin's token = %d after revoking bob's", st)
	}

	// A role file that failed to load shows on the Agents panel.
	run("open the Agents tab", chromedp.Navigate(m.URL()), chromedp.WaitVisible(sel("composer-input")), browsertest.Click(sel("panel-tab-agents")))
	waitFor("the broken role file is listed", `!document.querySelector('`+sel("role-errors")+`').hidden && `+
		`document.querySelector('`+sel("role-error")+`').textContent.includes("broken.md") && document.querySelector('`+sel("role-error")+`').textContent.includes("teleport")`)
}

// `bullpen demo` does nothing until someone watches: the first dashboard
// view starts it, labelled as a simulation, and it answers what the
// person asks (a wiki write-up goes to the PM).
func TestBrowserDemoStartsOnFirstView(t *testing.T) {
	tab := browsertest.Browser(t, 120*time.Second)
	m, token := startQuiet(t, "demo", func(m *Main) {
		m.Demo = true
		m.DemoPace = [2]time.Duration{10 * time.Millisecond, 30 * time.Millisecond}
	})
	browsertest.FailOnErrors(t, tab) // after the server starts: its check runs before the server stops
	if n, err := m.DB.CountMessages(context.Background(), 0); err != nil || n != 0 {
		t.Fatalf("%d messages before anyone watched (%v), want 0", n, err)
	}
	var agents struct{ Items []bullpen.AgentView }
	if apiCall(t, m, token, "GET", "/api/v1/agents", nil, &agents); len(agents.Items) != 0 {
		t.Fatalf("%d agents hired before anyone watched, want 0", len(agents.Items))
	}
	run, waitFor := browserSteps(t, tab)
	login(run, m, token)
	waitFor("labelled", `document.querySelector('`+sel("provider-notice")+`').textContent.startsWith("Simulation")`)
	const anyBody = `Array.from(document.querySelectorAll('[data-testid="message-body"]')).some(e => e.textContent.includes(%s))`
	waitFor("the demo request", fmt.Sprintf(anyBody, `"welcome to the demo"`))
	waitMessage(t, m, token, "lead", "*simulation* — @engineer please take this")
	run("ask for a write-up", chromedp.SendKeys(sel("composer-input"), "@lead please write up our onboarding steps on the wiki\n"))
	waitMessage(t, m, token, "pm", "wrote it up on the wiki page")
	waitMessage(t, m, token, "lead", "pm wrote it up on the wiki page")
	screenshot(t, tab, "demo.png")
}
