package sandbox

import (
	"io"
	"strings"
	"testing"
)

// io.Copy into a capBuffer (its ReadFrom) keeps exactly what Write would:
// the first limit bytes, and over only when more came.
func TestCapBufferReadFrom(t *testing.T) {
	for _, tc := range []struct {
		in   string
		keep string
		over bool
	}{{"", "", false}, {"hello", "hello", false}, {"hello!", "hello", true}, {strings.Repeat("x", 100<<10), "xxxxx", true}} {
		c := &capBuffer{limit: 5}
		n, err := io.Copy(c, struct{ io.Reader }{strings.NewReader(tc.in)}) // no WriterTo: as from a pipe
		if err != nil || n != int64(len(tc.in)) || c.buf.String() != tc.keep || c.over != tc.over {
			t.Errorf("%.10q: read %d %v, kept %q over %v; want %q over %v", tc.in, n, err, c.buf.String(), c.over, tc.keep, tc.over)
		}
		w := &capBuffer{limit: 5}
		_, _ = w.Write([]byte(tc.in))
		if w.buf.String() != c.buf.String() || w.over != c.over {
			t.Errorf("%.10q: Write kept %q over %v, ReadFrom %q over %v", tc.in, w.buf.String(), w.over, c.buf.String(), c.over)
		}
	}
	c := &capBuffer{limit: 5}
	_, _ = c.Write([]byte("abc"))
	if _, err := io.Copy(c, struct{ io.Reader }{strings.NewReader("defg")}); err != nil || c.buf.String() != "abcde" || !c.over {
		t.Errorf("after a write: kept %q over %v", c.buf.String(), c.over)
	}
}
