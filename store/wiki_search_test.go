package store

import (
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

func TestSnippet(t *testing.T) {
	body := "Intro words here.\n\nWe   shipped the build; shipping is fun. " + strings.Repeat("filler ", 40) + "ship"
	fillers := strings.TrimSpace(strings.Repeat("filler ", 14))
	tests := []struct {
		terms  []string
		prefix bool
		want   string
	}{
		{[]string{"shipping"}, false, "Intro words here. We \x02shipped\x03 the build; \x02shipping\x03 is fun. " + fillers + "…"},
		{[]string{"intro"}, false, "\x02Intro\x03 words here. We shipped the build; shipping is fun. " + fillers + "…"},
		{[]string{"fil"}, true, "…\x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03 \x02filler\x03…"},
		{[]string{"absent"}, false, "Intro words here. We shipped the build; shipping is fun. " + fillers + "…"},
	}
	for _, tt := range tests {
		if got := snippet(body, tt.terms, tt.prefix, 24); got != tt.want {
			t.Errorf("snippet(%v) =\n%q\nwant\n%q", tt.terms, got, tt.want)
		}
	}
	if got := htmlSnippet("a \x02<b>\x03 \x02c"); got != "a <mark>&lt;b&gt;</mark> <mark>c</mark>" {
		t.Errorf("htmlSnippet = %q", got)
	}
}

// A snippet is cut from the page's text, not its Markdown, so a search
// hit reads as the page does.
func TestSnippetOfMarkdown(t *testing.T) {
	if got := snippet(bullpen.MarkdownText("# Plan\n\n**Ship** it [[Friday]] via [the board](https://x.test)."), []string{"ship"}, false, 24); got != "Plan \x02Ship\x03 it Friday via the board" {
		t.Errorf("snippet of Markdown = %q", got)
	}
}
