package wiki

import (
	"context"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// Diff line operations.
const (
	OpEqual  = "equal"
	OpInsert = "insert"
	OpDelete = "delete"
)

// Diff compares revision from with revision to of a page. to 0 means the
// current revision; from 0 means the one before to.
func (w *Wiki) Diff(ctx context.Context, actor bullpen.Member, slug string, from, to int) (bullpen.WikiDiff, error) {
	p, err := w.page(ctx, actor, slug, true)
	if err != nil {
		return bullpen.WikiDiff{}, err
	}
	if to == 0 {
		to = p.Revision
	}
	if from == 0 {
		from = max(to-1, 1)
	}
	if from < 0 || to < 0 {
		return bullpen.WikiDiff{}, bullpen.Errorf(bullpen.EINVALID, "revisions must be positive")
	}
	a, err := w.db.WikiRevision(ctx, p, from)
	if err != nil {
		return bullpen.WikiDiff{}, err
	}
	b, err := w.db.WikiRevision(ctx, p, to)
	if err != nil {
		return bullpen.WikiDiff{}, err
	}
	d := bullpen.WikiDiff{Slug: p.Slug, From: from, To: to, FromTitle: a.Title, ToTitle: b.Title, FromTags: a.Tags, ToTags: b.Tags,
		Lines: DiffLines(a.Body, b.Body)}
	for _, l := range d.Lines {
		switch l.Op {
		case OpInsert:
			d.Added++
		case OpDelete:
			d.Removed++
		}
	}
	return d, nil
}

// maxEdits bounds the work of the Myers search; texts that differ in more
// lines than this get a coarser (still correct) diff of the middle part.
const maxEdits = 2000

// DiffLines returns a shortest line diff from a to b (Myers' O(ND)
// algorithm on the part between the common prefix and suffix). Applying
// its equal and insert lines in order yields b; equal and delete, a.
func DiffLines(a, b string) []bullpen.WikiDiffLine {
	al, bl := splitLines(a), splitLines(b)
	// Intern lines so that comparing is comparing ints.
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	ai, bi := intern(al), intern(bl)
	pre := 0
	for pre < len(ai) && pre < len(bi) && ai[pre] == bi[pre] {
		pre++
	}
	suf := 0
	for suf < len(ai)-pre && suf < len(bi)-pre && ai[len(ai)-1-suf] == bi[len(bi)-1-suf] {
		suf++
	}
	ops := myers(ai[pre:len(ai)-suf], bi[pre:len(bi)-suf])
	out := make([]bullpen.WikiDiffLine, 0, len(al)+len(bl))
	x, y := 0, 0 // lines of a and b consumed
	emit := func(op byte) {
		switch op {
		case '=':
			out = append(out, bullpen.WikiDiffLine{Op: OpEqual, Text: al[x], Old: x + 1, New: y + 1})
			x, y = x+1, y+1
		case '-':
			out = append(out, bullpen.WikiDiffLine{Op: OpDelete, Text: al[x], Old: x + 1})
			x++
		case '+':
			out = append(out, bullpen.WikiDiffLine{Op: OpInsert, Text: bl[y], New: y + 1})
			y++
		}
	}
	for range pre {
		emit('=')
	}
	for _, op := range ops {
		emit(op)
	}
	for range suf {
		emit('=')
	}
	return out
}

// splitLines splits text into lines; a final newline ends the last line
// rather than starting an empty one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// myers returns the edit script from a to b as '=', '-' and '+' bytes.
func myers(a, b []int) []byte {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return coarse(n, m)
	}
	limit := min(n+m, maxEdits)
	off := limit + 1
	v := make([]int, 2*limit+3)
	// trace[d] is v[-d..d] as it was before step d; step d only reads the
	// entries that step d-1 wrote.
	var trace [][]int
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, n, m)
			}
		}
	}
	return coarse(n, m)
}

func backtrack(trace [][]int, n, m int) []byte {
	var rev []byte
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		v := trace[d] // index k+d
		k := x - y
		var pk int
		if k == -d || (k != d && v[k-1+d] < v[k+1+d]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px, py := 0, 0
		if d > 0 {
			px = v[pk+d]
			py = px - pk
		}
		for x > px && y > py {
			rev = append(rev, '=')
			x, y = x-1, y-1
		}
		if d > 0 {
			if x == px {
				rev = append(rev, '+')
			} else {
				rev = append(rev, '-')
			}
		}
		x, y = px, py
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// coarse deletes all of a and inserts all of b.
func coarse(n, m int) []byte {
	out := make([]byte, 0, n+m)
	for range n {
		out = append(out, '-')
	}
	for range m {
		out = append(out, '+')
	}
	return out
}

// lineCounts counts the lines a save added and removed, for the timeline's
// "(+12 −3)"; a new page adds all of its lines.
func lineCounts(before, after string, exists bool) (added, removed int) {
	if !exists {
		before = ""
	}
	for _, l := range DiffLines(before, after) {
		switch l.Op {
		case OpInsert:
			added++
		case OpDelete:
			removed++
		}
	}
	return added, removed
}
