package wiki_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/wiki"
)

func TestDiffLines(t *testing.T) {
	tests := []struct {
		name, a, b, want string
	}{
		{"same", "a\nb\n", "a\nb", "=a =b"},
		{"empty to text", "", "x\ny", "+x +y"},
		{"text to empty", "x\ny", "", "-x -y"},
		{"insert middle", "a\nc", "a\nb\nc", "=a +b =c"},
		{"replace", "a\nb\nc", "a\nx\nc", "=a -b +x =c"},
		{"swap", "a\nb", "b\na", "-a =b +a"},
	}
	for _, tt := range tests {
		if got := render(wiki.DiffLines(tt.a, tt.b)); got != tt.want {
			t.Errorf("%s: DiffLines = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func render(lines []bullpen.WikiDiffLine) string {
	var parts []string
	for _, l := range lines {
		parts = append(parts, map[string]string{wiki.OpEqual: "=", wiki.OpInsert: "+", wiki.OpDelete: "-"}[l.Op]+l.Text)
	}
	return strings.Join(parts, " ")
}

// On random texts the diff rebuilds both sides, numbers lines right, and
// is as short as the longest common subsequence allows.
func TestDiffLinesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		a, b := randomLines(r), randomLines(r)
		d := wiki.DiffLines(strings.Join(a, "\n"), strings.Join(b, "\n"))
		var ra, rb []string
		edits := 0
		for _, l := range d {
			if l.Op != wiki.OpInsert {
				ra = append(ra, l.Text)
				if l.Old != len(ra) {
					t.Fatalf("case %d: old line number %d, want %d", i, l.Old, len(ra))
				}
			}
			if l.Op != wiki.OpDelete {
				rb = append(rb, l.Text)
				if l.New != len(rb) {
					t.Fatalf("case %d: new line number %d, want %d", i, l.New, len(rb))
				}
			}
			if l.Op != wiki.OpEqual {
				edits++
			}
		}
		if strings.Join(ra, "\n") != strings.Join(a, "\n") || strings.Join(rb, "\n") != strings.Join(b, "\n") {
			t.Fatalf("case %d: diff does not rebuild its inputs:\na=%q\nb=%q\n%v", i, a, b, d)
		}
		if want := len(a) + len(b) - 2*lcs(a, b); edits != want {
			t.Fatalf("case %d: %d edits, want %d (a=%q b=%q)", i, edits, want, a, b)
		}
	}
}

func randomLines(r *rand.Rand) []string {
	n := r.IntN(12)
	out := make([]string, n)
	for i := range out {
		out[i] = string(rune('a' + r.IntN(4)))
	}
	return out
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// Very different long texts fall back to a coarse diff quickly.
func TestDiffLinesLarge(t *testing.T) {
	var a, b strings.Builder
	for i := range 20000 {
		a.WriteString("a" + string(rune('0'+i%10)) + "\n")
		b.WriteString("b" + string(rune('0'+i%7)) + "\n")
	}
	d := wiki.DiffLines(a.String(), b.String())
	if len(d) != 40000 {
		t.Errorf("%d lines, want 40000", len(d))
	}
}
