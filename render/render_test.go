package render_test

import (
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/render"
)

func TestMarkdown(t *testing.T) {
	r := render.New()
	tests := []struct {
		name    string
		src     string
		want    []string
		notWant []string
	}{
		{"emphasis", "**hi**", []string{"<strong>hi</strong>"}, nil},
		{"code block", "```go\nx := 1\n```", []string{"<pre><code", "x := 1"}, nil},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", []string{"<table>", "<td>1</td>"}, nil},
		{"script tag", "<script>alert(1)</script>", nil, []string{"<script", "alert(1)</script>"}},
		{"img onerror", `<img src=x onerror="alert(1)">`, nil, []string{"onerror"}},
		{"javascript link", "[x](javascript:alert(1))", nil, []string{"javascript:"}},
		{"raw html attr", `<a href="#" onclick="evil()">x</a>`, nil, []string{"onclick"}},
		{"autolink nofollow", "see https://example.com", []string{`rel="nofollow`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Markdown(tt.src)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Markdown(%q) = %q, want it to contain %q", tt.src, got, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("Markdown(%q) = %q, must not contain %q", tt.src, got, w)
				}
			}
		})
	}
}
