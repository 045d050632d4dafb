package bullpen

import "testing"

// MarkdownText reads as the text does: a wiki search snippet and a
// timeline line quote it, not its markup.
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
		if got := MarkdownText(tt.in); got != tt.want {
			t.Errorf("%s: MarkdownText(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}
