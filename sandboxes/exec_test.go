package sandboxes

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPartialRune(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{name: "empty", in: "", want: 0},
		{name: "ascii", in: "abc", want: 0},
		{name: "complete euro", in: "a€", want: 0},
		{name: "euro missing one byte", in: "a\xe2\x82", want: 2},
		{name: "euro missing two bytes", in: "a\xe2", want: 1},
		{name: "emoji missing one byte", in: "\xf0\x9f\x98", want: 3},
		{name: "complete emoji", in: "\xf0\x9f\x98\x80", want: 0},
		{name: "binary tail", in: "\x80\x80\x80", want: 0},
		{name: "stray continuation", in: "a\x80", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := partialRune([]byte(tt.in)); got != tt.want {
				t.Errorf("partialRune(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestLiveBudget(t *testing.T) {
	b := &liveBudget{left: 10}
	if n, cut := b.take(6); n != 6 || cut {
		t.Fatalf("take(6) = %d, %v", n, cut)
	}
	if n, cut := b.take(6); n != 4 || !cut {
		t.Fatalf("take(6) over the budget = %d, %v; want 4, true", n, cut)
	}
	if n, cut := b.take(1); n != 0 || cut {
		t.Fatalf("take after the cut = %d, %v; want 0, false", n, cut)
	}
}

// TestCommandLine: the history shows a command as a shell would read it
// back, quoting kept, and a sh -c command line as written.
func TestCommandLine(t *testing.T) {
	tests := []struct {
		name string
		cmd  []string
		want string
	}{
		{name: "plain words", cmd: []string{"ls", "-la", "/tmp"}, want: "ls -la /tmp"},
		{name: "a space", cmd: []string{"touch", "a b"}, want: "touch 'a b'"},
		{name: "single quotes inside", cmd: []string{"python3", "-c", "print('a b')"}, want: `python3 -c "print('a b')"`},
		{name: "both quotes and a dollar", cmd: []string{"echo", `it's "$HOME"`}, want: `echo 'it'\''s "$HOME"'`},
		{name: "an empty argument", cmd: []string{"printf", ""}, want: "printf ''"},
		{name: "glob and redirection characters", cmd: []string{"rm", "*.txt", ">x"}, want: "rm '*.txt' '>x'"},
		{name: "non-ASCII letters", cmd: []string{"cat", "café.txt"}, want: "cat café.txt"},
		{name: "a newline", cmd: []string{"echo", "a\nb"}, want: "echo 'a\nb'"},
		{name: "sh -c as written", cmd: []string{"/bin/sh", "-c", `grep -r "a b" . | wc -l`}, want: `grep -r "a b" . | wc -l`},
		{name: "bash -c as written", cmd: []string{"bash", "-c", "echo 'x y'"}, want: "echo 'x y'"},
		{name: "sh -c with arguments quoted", cmd: []string{"sh", "-c", `echo "$1"`, "sh", "a b"}, want: `sh -c 'echo "$1"' sh 'a b'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := commandLine(tt.cmd); got != tt.want {
				t.Errorf("commandLine(%q) = %s, want %s", tt.cmd, got, tt.want)
			}
		})
	}
	long := []string{"echo", strings.Repeat("é", 400)}
	if got := commandLine(long); len(got) > maxCommandLine+len("…") || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Errorf("commandLine of a long command is %d bytes, valid UTF-8 %v: %q", len(got), utf8.ValidString(got), got)
	}
}
