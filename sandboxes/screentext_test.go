package sandboxes

import (
	"strings"
	"testing"
)

// TestScreenText: a terminal session's bytes, as a shell and its programs
// write them, read as the text that ended up on the screen.
func TestScreenText(t *testing.T) {
	tests := []struct {
		name  string
		width int      // the terminal's columns (0: unknown)
		in    []string // written in these pieces
		want  string
	}{
		{name: "plain lines", in: []string{"a\r\nb\r\n"}, want: "a\nb\n"},
		{name: "colours and a bracketed-paste mode",
			in:   []string{"\x1b[?2004h\x1b[01;32muser@box\x1b[00m:\x1b[01;34m~\x1b[00m$ ls\r\n\x1b[0m\x1b[01;34mdir\x1b[0m  file\r\n"},
			want: "user@box:~$ ls\ndir  file\n"},
		{name: "window title (OSC, BEL and ST ends)",
			in:   []string{"\x1b]0;user@box: ~\x07$ x\r\n\x1b]2;title\x1b\\y\r\n"},
			want: "$ x\ny\n"},
		{name: "echoed typing with backspaces", in: []string{"$ ecg", "\b \b", "ho hi\r\nhi\r\n"}, want: "$ echo hi\nhi\n"},
		{name: "readline erase to the end", in: []string{"$ long command\r$ \x1b[Kls\r\n"}, want: "$ ls\n"},
		{name: "progress redrawn with a carriage return", in: []string{"10%\r50%\r100%\r\n"}, want: "100%\n"},
		{name: "cursor left and insert", in: []string{"$ ac\x1b[D\x1b[1@b\r\n"}, want: "$ abc\n"},
		{name: "delete a character", in: []string{"$ axbc\x1b[3D\x1b[P\r\n"}, want: "$ abc\n"},
		{name: "column move", in: []string{"abc\x1b[6GX\r\n"}, want: "abc  X\n"},
		{name: "tab", in: []string{"a\tb\r\n"}, want: "a       b\n"},
		{name: "full-screen program left out",
			in:   []string{"$ vim f\r\n\x1b[?1049h\x1b[H\x1b[2J~\r\n~\r\n\"f\" 0L\x1b[?1049l", "$ \r\n"},
			want: "$ vim f\n[a full-screen program ran here]\n$\n"},
		{name: "a sequence split across writes", in: []string{"a\x1b", "[3", "1mb\x1b[0", "m\r\n"}, want: "ab\n"},
		{name: "a character split across writes", in: []string{"caf\xc3", "\xa9\r\n"}, want: "café\n"},
		{name: "the last prompt without a newline", in: []string{"out\r\n$ "}, want: "out\n$"},
		{name: "charset selection", in: []string{"\x1b(Bq\x1b(0x\x1b(B\r\n"}, want: "qx\n"},
		{name: "clear screen keeps what was written", in: []string{"old\r\n\x1b[H\x1b[2Jnew\r\n"}, want: "old\nnew\n"},
		// bash at the right margin of a 10-column terminal: " \r" moves to
		// the next row, where typing goes on.
		{name: "a typed line wraps at the margin", width: 10,
			in: []string{"$ echo abc", " \r", "def ghi\r\n"}, want: "$ echo abcdef ghi\n"},
		{name: "output exactly as wide as the terminal", width: 5, in: []string{"12345\r\nab\r\n"}, want: "12345\nab\n"},
		{name: "output wider than the terminal", width: 4, in: []string{"abcdefghij\r\n"}, want: "abcdefghij\n"},
		// Two backspaces across the wrap: the second moves up a row, to
		// the column, and erases from there.
		{name: "backspace over the wrap", width: 5,
			in: []string{"$ abc", "d", "\b\x1b[K", "\x1b[A\x1b[4C\x1b[K", "\r\n"}, want: "$ ab\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			s := newScreenText(&b, tt.width)
			for _, p := range tt.in {
				if n, err := s.Write([]byte(p)); n != len(p) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", p, n, err)
				}
			}
			s.Close()
			if got := b.String(); got != tt.want {
				t.Errorf("screen text of %q = %q, want %q", strings.Join(tt.in, ""), got, tt.want)
			}
		})
	}
}

// A line longer than the bound is written out in parts, so a program that
// never ends its line cannot grow the buffer without end.
func TestScreenTextBoundsALine(t *testing.T) {
	var b strings.Builder
	s := newScreenText(&b, 0)
	s.Write([]byte(strings.Repeat("x", 3*maxLineRunes)))
	if len(s.line) > maxLineRunes {
		t.Errorf("line being edited holds %d runes, want at most %d", len(s.line), maxLineRunes)
	}
	s.Close()
	if got := strings.Count(b.String(), "x"); got != 3*maxLineRunes {
		t.Errorf("wrote %d x, want %d", got, 3*maxLineRunes)
	}
}
