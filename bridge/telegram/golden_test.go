package telegram

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/golden"
)

// TestGoldenFormat pins the Telegram HTML of each Markdown input under
// testdata/format, and the parts a relayed message is split into, byte
// for byte: chats show whatever these bytes say. After an intended change
// regenerate with
//
//	go test ./bridge/telegram -run TestGolden -update
//
// and review the diff of testdata/golden.
func TestGoldenFormat(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "format", "*.md"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs under testdata/format: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".md")
		t.Run(name, func(t *testing.T) {
			md, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "format/"+name+".html", []byte(ToHTML(string(md))))
		})
	}
}

// TestGoldenSplit pins how long relayed messages (the author line and
// the body's HTML, as messageItems builds it) are cut at MaxMessage: at
// paragraph breaks, inside a code block (closed and reopened), and
// between the words of one long bold paragraph.
func TestGoldenSplit(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("testdata", "format", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	var code, words strings.Builder
	for i := range 400 {
		fmt.Fprintf(&code, "line %03d: if a < b && c > d { return \"x\" }\n", i)
		fmt.Fprintf(&words, "word%d%s ", i, strings.Repeat("s", i%5))
	}
	tests := []struct{ name, body string }{
		// Fourteen reports: about 11,000 UTF-16 units, three parts.
		{"report_x14", strings.Repeat(string(md)+"\n", 14)},
		{"code_block", "Output:\n\n```\n" + code.String() + "```\n\nDone."},
		{"bold_words", "**" + strings.TrimSpace(strings.Repeat(words.String(), 2)) + "** end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := bullpen.Message{ID: 7, Body: tt.body, Source: bullpen.SourceWeb,
				Author: &bullpen.Member{ID: 3, Handle: "engineer", DisplayName: "Eng <One>", Kind: bullpen.KindAgent}}
			parts := Split(authorLine(m)+"\n"+ToHTML(m.Body), MaxMessage)
			var b strings.Builder
			for i, p := range parts {
				fmt.Fprintf(&b, "===== part %d of %d: %d UTF-16 units =====\n%s\n", i+1, len(parts), u16(p), p)
			}
			golden.Check(t, "split/"+tt.name+".txt", []byte(b.String()))
		})
	}
}
