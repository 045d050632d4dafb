package sandboxes

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHeadTail(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{name: "fits", writes: []string{"abc", "def"}, want: "abcdef"},
		{name: "fits exactly", writes: []string{"abcdefgh"}, want: "abcdefgh"},
		{name: "one big write", writes: []string{"0123456789"}, want: "012\n… [2 bytes left out] …\n56789"},
		{name: "many small writes", writes: strings.Split("0123456789abc", ""), want: "012\n… [5 bytes left out] …\n89abc"},
		{name: "tail wraps around", writes: []string{"012", "3456", "789", "abcdefg", "xy"}, want: "012\n… [11 bytes left out] …\nefgxy"},
		{name: "characters are not cut", writes: []string{"ab€", "xxxxxxxx", "€yzw"}, want: "ab\n… [14 bytes left out] …\nyzw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHeadTail(3, 5)
			total := 0
			for _, w := range tt.writes {
				h.Write([]byte(w))
				total += len(w)
			}
			if got := h.String(); got != tt.want || !utf8.ValidString(got) {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if len(h.head) > 3 || cap(h.tail) > 5 {
				t.Errorf("kept %d+%d bytes, more than 3+5", len(h.head), cap(h.tail))
			}
			if tt.want == strings.Join(tt.writes, "") && h.Dropped() != 0 {
				t.Errorf("Dropped() = %d for output that fits", h.Dropped())
			}
		})
	}
}

func TestCapture(t *testing.T) {
	c := &capture{limit: 4}
	for _, w := range []string{"ab", "c€", "zz"} {
		c.add([]byte(w))
	}
	c.trim()
	if string(c.buf) != "abc" || c.total != 8 {
		t.Errorf("capture = %q of %d bytes, want \"abc\" (the cut € dropped) of 8", c.buf, c.total)
	}
	small := &capture{limit: 10}
	small.add([]byte("ok€"))
	small.trim()
	if string(small.buf) != "ok€" {
		t.Errorf("capture under the limit = %q", small.buf)
	}
}
