package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// newUserModel is the fake provider's lead: "list the team" asks for
// list_members (which needs a human's approval in this test), the answer
// to the approval gets the team's size, anything else a greeting.
func newUserModel(key string) llmtest.Handler {
	return func(r llmtest.CapturedRequest) llmtest.Reply {
		if r.Header.Get("Authorization") != "Bearer "+key {
			return llmtest.Reply{Status: http.StatusUnauthorized, Message: "Incorrect API key provided"}
		}
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "tool":
			return llmtest.Reply{Text: "The team is four: lead, engineer, pm and designer."}
		case strings.Contains(last.Content, "Approval #"):
			return llmtest.Reply{Text: "Approved, thanks. The team is four: lead, engineer, pm and designer."}
		case strings.Contains(last.Content, "list the team"):
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: bullpen.ToolListMembers, Arguments: []byte(`{}`)}}}
		}
		return llmtest.Reply{Text: "Hello from the lead: ready when you are."}
	}
}

// A new user's first run, in real Chromium at phone width (390×844),
// against the real program on a fresh data dir: log in; the guided empty
// state links to Settings → Providers, where the fake provider is added;
// back in the office, the starter team is hired in one click; @le is
// completed to @lead from the suggestions; the lead's answer shows; and
// an approval the lead asks for is approved from its own message.
func TestNewUserFirstRunBrowser(t *testing.T) {
	const key = "sk-newuser-000011112222"
	fake := llmtest.NewFakeOpenAI(newUserModel(key))
	defer fake.Close()
	tab := browsertest.Browser(t, 180*time.Second)
	m, token := startQuiet(t, "serve", nil)
	browsertest.FailOnErrors(t, tab)
	run, waitFor := browserSteps(t, tab)
	q := func(id string) string { return `document.querySelector('` + sel(id) + `')` }
	run("phone size", chromedp.EmulateViewport(390, 844))
	login(run, m, token)

	waitFor("first run", q("first-run")+` !== null && `+q("first-run-provider")+`.dataset.done === "false"`)
	screenshot(t, tab, "newuser-1-empty-390.png")
	run("to the provider form", browsertest.Click(sel("first-run-provider-link")))
	waitFor("the form, in view", `location.hash === "#add-provider" && (r => r.top >= 0 && r.top < innerHeight)(`+q("provider-name")+`.getBoundingClientRect())`)
	run("add the provider",
		chromedp.SendKeys(sel("provider-name"), "fake"),
		chromedp.SetValue(sel("provider-kind"), "openai"),
		chromedp.SendKeys(sel("provider-base-url"), fake.BaseURL()),
		chromedp.SendKeys(sel("provider-api-key"), key),
		chromedp.SendKeys(sel("provider-model"), "gpt-test"),
		browsertest.Click(sel("provider-save")))
	waitFor("back in the office, provider done", q("first-run-provider")+`?.dataset.done === "true"`)

	run("hire the team", browsertest.Click(sel("first-run-hire")))
	waitFor("team hired", q("first-run-hired")+`?.textContent.includes("@lead")`)
	screenshot(t, tab, "newuser-2-hired-390.png")

	run("type @le", browsertest.Click(sel("composer-input")), chromedp.SendKeys(sel("composer-input"), "@le"))
	waitFor("suggestion", `!!document.querySelector('[data-testid="mention-option"][data-handle="lead"]')`)
	screenshot(t, tab, "newuser-3-mention-390.png")
	run("complete and send", chromedp.KeyEvent(kb.Enter), chromedp.SendKeys(sel("composer-input"), "hello"), chromedp.KeyEvent(kb.Enter))
	waitFor("the lead answers", `document.body.innerText.includes("Hello from the lead")`)
	screenshot(t, tab, "newuser-4-answer-390.png")

	var lead bullpen.AgentView
	var agents struct{ Items []bullpen.AgentView }
	apiCall(t, m, token, "GET", "/api/v1/agents", nil, &agents)
	for _, a := range agents.Items {
		if a.Handle == "lead" {
			lead = a
		}
	}
	if st := apiCall(t, m, token, "PATCH", "/api/v1/agents/"+itoa64(lead.ID), map[string]any{"approvals": []string{bullpen.ToolListMembers}}, nil); st != 200 {
		t.Fatalf("make list_members need approval: %d", st)
	}
	run("ask for the team", chromedp.SendKeys(sel("composer-input"), "@lead list the team"), chromedp.KeyEvent(kb.Enter))
	waitFor("Approve on the request", `!!document.querySelector('[data-testid="approval-approve"]')`)
	waitFor("the count on the bottom bar", q("phone-approvals")+`.textContent === "1" && !`+q("phone-approvals")+`.hidden`)
	screenshot(t, tab, "newuser-5-approval-390.png")
	run("approve", browsertest.Click(sel("approval-approve")))
	waitFor("approved", `document.querySelector('[data-testid="message-approval"]').dataset.state === "approved"`)
	waitFor("the lead goes on", `document.body.innerText.includes("The team is four")`)
	screenshot(t, tab, "newuser-6-done-390.png")
	waitMessage(t, m, token, "lead", "The team is four")
}
