package sandboxes

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// headTail keeps the first head and the last tail bytes written to it and
// counts the rest, so a command's output of any size is summarized in
// bounded memory.
type headTail struct {
	head, tail []byte
	headCap    int
	tailCap    int
	start      int   // where the oldest byte of tail is, once tail is full
	total      int64 // bytes written
}

// newHeadTail keeps up to head and tail bytes. Each is allocated, at its
// bound, by the first write that reaches it: most commands write a line
// or two to stdout and nothing to stderr.
func newHeadTail(head, tail int) *headTail {
	return &headTail{headCap: head, tailCap: tail}
}

// Write implements io.Writer; it never fails.
func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	h.total += int64(n)
	if room := h.headCap - len(h.head); room > 0 && len(p) > 0 {
		if h.head == nil {
			h.head = make([]byte, 0, h.headCap)
		}
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > 0 && h.tail == nil {
		h.tail = make([]byte, 0, h.tailCap)
	}
	if len(p) >= h.tailCap { // only the last tailCap bytes can stay
		h.tail = append(h.tail[:0], p[len(p)-h.tailCap:]...)
		h.start = 0
		return n, nil
	}
	for len(p) > 0 {
		if len(h.tail) < h.tailCap {
			k := min(h.tailCap-len(h.tail), len(p))
			h.tail = append(h.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(h.tail[h.start:], p)
		h.start = (h.start + k) % h.tailCap
		p = p[k:]
	}
	return n, nil
}

// Dropped is how many bytes are neither in the head nor in the tail.
func (h *headTail) Dropped() int64 {
	return h.total - int64(len(h.head)) - int64(len(h.tail))
}

// String is the head, a marker saying how much was left out, and the tail;
// the cuts are moved to character boundaries so text stays valid UTF-8.
func (h *headTail) String() string {
	tail := append(append([]byte(nil), h.tail[h.start:]...), h.tail[:h.start]...)
	if h.Dropped() == 0 {
		return string(h.head) + string(tail)
	}
	head := h.head[:len(h.head)-partialRune(h.head)]
	skip := 0
	for skip < len(tail) && skip < 3 && !utf8.RuneStart(tail[skip]) {
		skip++
	}
	var b strings.Builder
	b.Write(head)
	fmt.Fprintf(&b, "\n… [%d bytes left out] …\n", h.Dropped()+int64(len(h.head)-len(head)+skip))
	b.Write(tail[skip:])
	return b.String()
}
