package agents

import (
	"fmt"
	"regexp"
	"strings"
)

// Keywords of a person's request, as whole words.
var (
	deployRE = regexp.MustCompile(`(?i)\bdeploy(s|ed|ing|ment)?\b`)
	testRE   = regexp.MustCompile(`(?i)\btest(s|ed|ing)?\b`)
	wikiRE   = regexp.MustCompile(`(?i)\b(wiki|docs?|document|write[- ]?up)\b`)
)

// The demo reacts to what a person asks by keywords: a request that
// mentions tests, a deploy or the wiki goes to the agent who would do it,
// which answers in kind. Everything else gets the general check.

// Phrases the lead's hand-offs carry, which tell the worker what to do.
const (
	askTests    = "run the tests"
	askDeploy   = "dry-run deploy check"
	askWriteUp  = "write this up on the wiki"
	testCommand = `echo "ok   demo/app    0.42s" && echo "ok   demo/api    0.17s" && echo "PASS (simulated test run)"`
	// deployCommand only prints: a demo never deploys anything.
	deployCommand = `echo "deploy dry-run: build ok, 3 services, 0 changes to apply (simulated)"`
)

// delegation is the lead's hand-off of a person's request.
func delegation(worker, request, root string) string {
	switch {
	case deployRE.MatchString(request):
		return fmt.Sprintf("@%s please do a %s in your sandbox (a real deploy needs a human's approval): %s — write the outcome to the wiki page %q.", worker, askDeploy, request, "Deploy check "+root)
	case testRE.MatchString(request):
		return fmt.Sprintf("@%s please %s in your sandbox: %s — write the results to the wiki page %q.", worker, askTests, request, "Test run "+root)
	case wikiRE.MatchString(request):
		return fmt.Sprintf("@pm please %s: %s", askWriteUp, request)
	}
	return fmt.Sprintf("@%s please take this: %s — run a quick check in your sandbox and write what you find to the wiki page %q.", worker, request, "Report "+root)
}

// demoCommand is the command a worker runs for a hand-off, with the wiki
// page it reports to; "" for the general check.
func demoCommand(body, root string) (string, string) {
	switch {
	case strings.Contains(body, askTests):
		return testCommand, "Test run " + root
	case strings.Contains(body, askDeploy):
		return deployCommand, "Deploy check " + root
	}
	return "", ""
}

// leadReport is the lead's answer to the person once a worker reported.
// It names the worker without an @, so that the worker does not wake
// again.
func leadReport(asker, from, body, title string) string {
	page := submatch(pageRE, body)
	switch {
	case strings.Contains(body, "wrote it up on the wiki"):
		return fmt.Sprintf("%sdone: %s wrote it up on the wiki page %q.", asker, from, page)
	case strings.Contains(body, "PASS"):
		return fmt.Sprintf("%sthe tests pass: %s ran them in a sandbox; the output is on the wiki page %q.", asker, from, page)
	case strings.Contains(body, "deploy dry-run"):
		return fmt.Sprintf("%sthe deploy dry-run is clean: %s checked it in a sandbox (see the wiki page %q); a real deploy waits for a human's approval.", asker, from, page)
	}
	return fmt.Sprintf("%sdone: %s checked it in a sandbox and documented it on the wiki page %q.", asker, from, title)
}

// pageRE finds the wiki page a worker's report names.
var pageRE = regexp.MustCompile(`wiki page "([^"]+)"`)
