package web_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/bullpen-hq/bullpen/view"
)

// An agent card shows the end of the text the agent streams, and it
// starts at a whole word, after "…": the card of an agent whose answer is
// about 600 characters (streamed a few words a delta) shows a tail of it
// that begins where a word begins, never a word cut in two. At each
// screen size.
func TestAgentStreamStartsAtAWordBrowser(t *testing.T) {
	s := newWorkspaceServer(t, time.Hour)
	var hired view.Hired
	if st := s.do("POST", "/api/v1/agents", s.Token, map[string]any{"role": "starter/engineer", "handle": "eng"}, &hired); st != 201 {
		t.Fatalf("hire: %d", st)
	}
	for i, size := range [][2]int64{{1400, 900}, {1024, 768}, {390, 844}} {
		name := fmt.Sprintf("%dx%d", size[0], size[1])
		b := newTab(t, s.URL, s.Token, size[0], size[1])
		if size[0] < 700 {
			b.mouseClick(name+": agents", sel("phone-tab-agents"))
		} else {
			b.mouseClick(name+": agents", sel("panel-tab-agents"))
		}
		b.waitFor(name+": the card, and the panel's feed", q("agent-stream-eng")+` !== null && document.querySelector("[data-agents]").dataset.live === "open"`)
		answer := "result " + s.askAgent(hired.Agent.Member, fmt.Sprintf(`for i in $(seq 1 80); do printf 'wd%%d-%d ' $i; done`, i))
		b.waitFor(name+": the end of the answer", q("agent-stream-eng")+`.textContent.endsWith('"stderr":""}')`)
		got := evalIn[string](b, q("agent-stream-eng")+`.textContent`)
		shown, cut := strings.CutPrefix(got, "…")
		at := len(answer) - len(shown)
		switch {
		case !cut || !strings.HasSuffix(answer, shown) || len(shown) > 160:
			t.Errorf("%s: the card shows %q; want … and at most 160 characters of the end of %q", name, got, answer)
		case at > 0 && !unicode.IsSpace(rune(answer[at-1])):
			t.Errorf("%s: the card's text %q starts inside a word (%q)", name, got, answer[max(0, at-8):at+8])
		}
		b.shot("agent-stream-" + name)
	}
}
