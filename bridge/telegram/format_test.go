package telegram

import (
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/bridge/telegram/tgtest"
)

func TestToHTML(t *testing.T) {
	tests := []struct {
		name, md, want string
	}{
		{"plain", "hello", "hello"},
		{"escapes", "a < b && c > d \"q\"", "a &lt; b &amp;&amp; c &gt; d &quot;q&quot;"},
		{"emphasis", "*i* **b** ~~s~~", "<i>i</i> <b>b</b> <s>s</s>"},
		{"code span", "run `rm -rf <dir>`", "run <code>rm -rf &lt;dir&gt;</code>"},
		{"fence", "```go\nx := 1 < 2\n```", `<pre><code class="language-go">x := 1 &lt; 2</code></pre>`},
		{"heading", "# Plan\ntext", "<b>Plan</b>\n\ntext"},
		{"link", "[site](https://example.com/?a=1&b=2)", `<a href="https://example.com/?a=1&amp;b=2">site</a>`},
		{"unsafe link", "[x](javascript:alert(1))", "x"},
		{"raw html escaped", "<script>alert(1)</script> <b>hi</b>", "&lt;script&gt;alert(1)&lt;/script&gt; &lt;b&gt;hi&lt;/b&gt;"},
		{"list", "- one\n- two", "• one\n• two"},
		{"ordered", "3. a\n4. b", "3. a\n4. b"},
		{"quote", "> said\n> more", "<blockquote>said\nmore</blockquote>"},
		{"paragraphs", "one\n\ntwo", "one\n\ntwo"},
		{"mention kept", "@lead please", "@lead please"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ToHTML(tt.md)
			if got != tt.want {
				t.Errorf("ToHTML(%q) = %q, want %q", tt.md, got, tt.want)
			}
			if _, err := tgtest.ParseHTML(got); err != nil {
				t.Errorf("ToHTML(%q) = %q, which Telegram would refuse: %v", tt.md, got, err)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	para := strings.Repeat("word ", 199) + "end." // 1,000 characters
	tests := []struct {
		name  string
		html  string
		limit int
		parts int
	}{
		{"short", "hello", 4096, 1},
		{"paragraphs", strings.Repeat(para+"\n\n", 6), 4096, 2},
		{"one long line", strings.Repeat("abcdefghi ", 1000), 4096, 3},
		{"no spaces", strings.Repeat("x", 9000), 4096, 3},
		{"inside bold", "<b>" + strings.Repeat("bold words ", 800) + "</b>", 4096, 3},
		{"code block", "<pre>" + strings.Repeat("line &lt;x&gt;\n", 700) + "</pre>", 4096, 3},
		{"entities", strings.Repeat("&amp;&lt;&gt;", 2000), 4096, 7},
		{"emoji", strings.Repeat("🙂", 5000), 4096, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := Split(tt.html, tt.limit)
			if len(parts) != tt.parts {
				t.Errorf("Split gave %d parts, want %d", len(parts), tt.parts)
			}
			wantPlain, err := tgtest.ParseHTML(tt.html)
			if err != nil {
				t.Fatal(err)
			}
			var gotPlain strings.Builder
			for i, p := range parts {
				if n := u16(p); n > tt.limit {
					t.Errorf("part %d has %d UTF-16 units, over %d", i, n, tt.limit)
				}
				plain, err := tgtest.ParseHTML(p)
				if err != nil {
					t.Errorf("part %d is not valid Telegram HTML: %v\n%s", i, err, p[:min(200, len(p))])
				}
				gotPlain.WriteString(plain)
			}
			squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
			if squash(gotPlain.String()) != squash(wantPlain) {
				t.Errorf("the parts together do not carry the whole text")
			}
		})
	}
}

func TestSplitPrefersParagraphs(t *testing.T) {
	a, b := strings.Repeat("a ", 1500), strings.Repeat("b ", 1500)
	parts := Split(strings.TrimSpace(a)+"\n\n"+strings.TrimSpace(b), 4096)
	if len(parts) != 2 || strings.Contains(parts[0], "b") || strings.Contains(parts[1], "a") {
		t.Fatalf("Split did not cut at the paragraph break: %d parts", len(parts))
	}
}
