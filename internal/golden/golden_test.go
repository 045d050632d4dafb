package golden

import (
	"strings"
	"testing"
)

func TestFirstDiff(t *testing.T) {
	tests := []struct {
		name, want, got, has string
	}{
		{"changed line", "a\nb\nc", "a\nB\nc", `line 2:`},
		{"extra line", "a\n", "a\nb\n", `line 2:`},
		{"trailing newline", "a", "a\n", `line 2:`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := firstDiff([]byte(tt.want), []byte(tt.got)); !strings.Contains(d, tt.has) {
				t.Errorf("firstDiff(%q, %q) = %q, want it to contain %q", tt.want, tt.got, d, tt.has)
			}
		})
	}
}

// Check must fail on a one-byte change and pass on equal bytes.
func TestCheck(t *testing.T) {
	if err := writeGolden(t, "x.txt", "hello\n"); err != nil {
		t.Fatal(err)
	}
	if failed(func(tb testing.TB) { Check(tb, "x.txt", []byte("hello\n")) }) {
		t.Error("Check failed on equal bytes")
	}
	if !failed(func(tb testing.TB) { Check(tb, "x.txt", []byte("hellO\n")) }) {
		t.Error("Check passed on a changed byte")
	}
}
