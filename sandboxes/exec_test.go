package sandboxes

import "testing"

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

func TestCommandLine(t *testing.T) {
	long := make([]byte, 400)
	for i := range long {
		long[i] = 'x'
	}
	if got := commandLine([]string{"echo", string(long)}); len(got) > 310 {
		t.Errorf("commandLine of a long command is %d bytes", len(got))
	}
	if got := commandLine([]string{"ls", "-la"}); got != "ls -la" {
		t.Errorf("commandLine = %q", got)
	}
}
