package sandboxes

import (
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// screenText turns what a terminal session wrote (prompts, echoed keys,
// colours, cursor moves, window titles) into the plain text a reader of
// the exec history wants: each line as it ended up on the screen, with no
// control sequences. It edits one line at a time, as a terminal would
// (carriage return, backspace, erase and cursor moves within the line),
// and writes each finished line to w. A line longer than the terminal is
// wide wraps on the screen, and shells redraw such lines row by row
// (bash's " \r" at the margin, cursor up to edit the row above); the
// cursor moves within the row, so the line is kept whole. What a
// full-screen program (vim, top) draws on the alternate screen is left
// out, with a note. The live terminal is not affected: this is only what
// the history keeps.
type screenText struct {
	w      io.Writer
	width  atomic.Int32 // the terminal's columns (0: no wrapping); set by resizes
	line   []rune
	base   int // where the cursor's row starts in line (rows above it are wrapped parts)
	col    int // the cursor's column in its row
	state  escState
	params []byte // a CSI sequence's parameter bytes so far
	alt    bool   // on the alternate screen
	carry  []byte // an incomplete UTF-8 character from the last write
}

// escState is where the parser is in an escape sequence.
type escState int

const (
	ground  escState = iota
	esc              // after ESC
	csi              // ESC [ …
	str              // OSC, DCS, APC, PM, SOS: text up to BEL or ESC \
	strEsc           // ESC inside such a string
	charset          // ESC ( and the like: one more byte
)

// maxLineRunes bounds the line being edited; a longer one is written out
// in parts.
const maxLineRunes = 4096

// newScreenText writes the screen's text of a terminal cols wide to w.
func newScreenText(w io.Writer, cols int) *screenText {
	s := &screenText{w: w}
	s.setWidth(cols)
	return s
}

// setWidth follows a resize; it may be called while Write runs.
func (s *screenText) setWidth(cols int) { s.width.Store(int32(min(max(cols, 0), maxLineRunes))) }

// Write implements io.Writer; it never fails.
func (s *screenText) Write(p []byte) (int, error) {
	n := len(p)
	if len(s.carry) > 0 {
		p = append(s.carry, p...)
		s.carry = nil
	}
	for len(p) > 0 {
		if p[0] < utf8.RuneSelf {
			s.byte(p[0])
			p = p[1:]
			continue
		}
		if !utf8.FullRune(p) {
			s.carry = append([]byte(nil), p...)
			break
		}
		r, size := utf8.DecodeRune(p)
		p = p[size:]
		if s.state == ground {
			s.put(r)
		}
	}
	return n, nil
}

// Close writes out the line still being edited (a session's last prompt).
func (s *screenText) Close() error {
	if len(s.carry) > 0 && s.state == ground {
		s.put(utf8.RuneError)
	}
	s.carry = nil
	if len(s.line) > 0 {
		s.flush("")
	}
	return nil
}

// byte handles one ASCII byte.
func (s *screenText) byte(c byte) {
	switch s.state {
	case esc:
		s.escape(c)
	case csi:
		s.csiByte(c)
	case str:
		switch c {
		case 0x07:
			s.state = ground
		case 0x1b:
			s.state = strEsc
		}
	case strEsc:
		s.state = str
		if c == '\\' {
			s.state = ground
		}
	case charset:
		s.state = ground
	default:
		s.ground(c)
	}
}

func (s *screenText) ground(c byte) {
	switch {
	case c == 0x1b:
		s.state = esc
	case s.alt:
	case c == '\n':
		s.flush("\n")
	case c == '\r':
		s.col = 0
	case c == '\b':
		s.col = max(s.col-1, 0)
	case c == '\t':
		s.col = min((s.col/8+1)*8, s.rowEnd()-1)
	case c >= 0x20 && c < 0x7f:
		s.put(rune(c))
	}
}

func (s *screenText) escape(c byte) {
	s.state = ground
	switch c {
	case '[':
		s.state, s.params = csi, s.params[:0]
	case ']', 'P', 'X', '^', '_':
		s.state = str
	case '(', ')', '*', '+', '-', '.', '/', '#', '%':
		s.state = charset
	}
}

func (s *screenText) csiByte(c byte) {
	switch {
	case c >= 0x30 && c <= 0x3f:
		if len(s.params) < 32 {
			s.params = append(s.params, c)
		}
	case c >= 0x40 && c <= 0x7e:
		s.state = ground
		s.control(c, string(s.params))
	case c == 0x1b:
		s.state = esc
	case c < 0x20:
		s.ground(c)
	}
}

// control applies a CSI sequence that changes the line or the screen.
func (s *screenText) control(final byte, params string) {
	switch final {
	case 'h', 'l':
		for _, p := range strings.Split(params, ";") {
			if p == "?1049" || p == "?1047" || p == "?47" {
				s.altScreen(final == 'h')
			}
		}
		return
	}
	if s.alt {
		return
	}
	n := csiNumber(params, 1)
	at := s.base + s.col
	switch final {
	case 'A':
		s.base = max(s.base-n*s.rowWidth(), 0)
	case 'B':
		s.base = max(s.base, min(s.base+n*s.rowWidth(), len(s.line)/s.rowWidth()*s.rowWidth()))
	case 'C':
		s.col = min(s.col+n, s.rowEnd()-1)
	case 'D':
		s.col = max(s.col-n, 0)
	case 'G':
		s.col = min(max(n-1, 0), s.rowEnd()-1)
	case 'K':
		s.eraseInLine(csiNumber(params, 0))
	case 'P':
		if at < len(s.line) {
			s.line = append(s.line[:at], s.line[min(at+n, len(s.line)):]...)
		}
	case '@':
		if at < len(s.line) {
			n = min(n, maxLineRunes-len(s.line))
			s.line = append(s.line[:at], append([]rune(strings.Repeat(" ", n)), s.line[at:]...)...)
		}
	case 'X':
		for i := at; i < min(at+n, len(s.line)); i++ {
			s.line[i] = ' '
		}
	case 'J':
		if p := csiNumber(params, 0); p == 2 || p == 3 {
			s.line, s.base, s.col = s.line[:0], 0, 0 // clear: what was written stays written
		}
	}
}

// rowWidth is the terminal's width, or the line's bound when unknown.
func (s *screenText) rowWidth() int {
	if w := int(s.width.Load()); w > 0 {
		return w
	}
	return maxLineRunes
}

// rowEnd is how far the cursor's row may reach.
func (s *screenText) rowEnd() int { return min(s.rowWidth(), maxLineRunes-s.base) }

func (s *screenText) eraseInLine(mode int) {
	at := s.base + s.col
	switch mode {
	case 0:
		if at < len(s.line) {
			end := min(s.base+s.rowWidth(), len(s.line))
			if end >= len(s.line) {
				s.line = s.line[:at]
			} else {
				for i := at; i < end; i++ {
					s.line[i] = ' '
				}
			}
		}
	case 1:
		for i := s.base; i <= at && i < len(s.line); i++ {
			s.line[i] = ' '
		}
	case 2:
		if s.base == 0 {
			s.line = s.line[:0]
		} else {
			s.line = s.line[:min(s.base, len(s.line))]
		}
	}
}

// altScreen notes entering or leaving a full-screen program's screen.
func (s *screenText) altScreen(on bool) {
	if on == s.alt {
		return
	}
	s.alt = on
	if !on {
		if len(s.line) > 0 {
			s.flush("\n")
		}
		_, _ = io.WriteString(s.w, "[a full-screen program ran here]\n")
	}
}

// put writes r at the cursor, over what is there. At the right margin
// the row wraps: the next character starts the row below, in the same
// line.
func (s *screenText) put(r rune) {
	if s.alt {
		return
	}
	if s.col >= s.rowWidth() {
		s.base, s.col = s.base+s.rowWidth(), 0
	}
	at := s.base + s.col
	if at >= maxLineRunes {
		s.flush("\n")
		at = 0
	}
	for len(s.line) < at {
		s.line = append(s.line, ' ')
	}
	if at < len(s.line) {
		s.line[at] = r
	} else {
		s.line = append(s.line, r)
	}
	s.col++
}

// flush writes the line, without trailing blanks, then end.
func (s *screenText) flush(end string) {
	_, _ = io.WriteString(s.w, strings.TrimRight(string(s.line), " ")+end)
	s.line, s.base, s.col = s.line[:0], 0, 0
}

// csiNumber reads a CSI sequence's first parameter (def when absent).
func csiNumber(params string, def int) int {
	first, _, _ := strings.Cut(params, ";")
	n, err := strconv.Atoi(strings.TrimLeft(first, "?>="))
	if err != nil || n < 0 {
		return def
	}
	if n == 0 && def == 1 {
		return 1
	}
	return min(n, maxLineRunes)
}
