package store

import (
	"strings"
	"testing"
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

// TestMarkdownText: a snippet is cut from the page's text, not its
// Markdown, so a search hit reads as the page does.
func TestMarkdownText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"headings, emphasis and code", "## Launch **plan**\nShip `v2` on *Friday*, __really__ ~~maybe~~.", "Launch plan\nShip v2 on Friday, really maybe."},
		{"lists, tasks and quotes", "- one\n* two\n1. three\n- [x] done\n> quoted", "one\ntwo\nthree\ndone\nquoted"},
		{"links, images and wiki links", "See [the guide](https://x.test/g) and ![a chart](c.png), [[Deploy Guide]] or [[deploy-guide|the deploy page]].", "See the guide and a chart, Deploy Guide or the deploy page."},
		{"fences, rules and tables", "```go\nx := 1\n```\n---\n| a | b |\n|---|---|\n| c | d |", "\nx := 1\n\n\n  a   b  \n\n  c   d  "},
		{"HTML tags", "a <b>bold</b> word<br/>", "a  bold  word "},
		{"snake_case and arithmetic stay", "set max_steps to 2*3", "set max_steps to 2*3"},
	}
	for _, tt := range tests {
		if got := markdownText(tt.in); got != tt.want {
			t.Errorf("%s: markdownText(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	if got := snippet(markdownText("# Plan\n\n**Ship** it [[Friday]] via [the board](https://x.test)."), []string{"ship"}, false, 24); got != "Plan \x02Ship\x03 it Friday via the board" {
		t.Errorf("snippet of Markdown = %q", got)
	}
}
