// Package golden compares a test's output with a file under the calling
// package's testdata/golden folder, for output that must stay byte-stable
// (prompt prefixes that provider caches key on, Telegram HTML). Run the
// test with -update to rewrite the files after an intended change, and
// review the diff before committing it:
//
//	go test ./agents -run TestGolden -update
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update is a test flag, registered only in test binaries that import
// this package.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// Check compares got with testdata/golden/name, or writes it there under
// -update. A mismatch fails the test and names the first differing line.
func Check(tb testing.TB, name string, got []byte) {
	tb.Helper()
	path := filepath.Join("testdata", "golden", filepath.FromSlash(name))
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatalf("golden: %v", err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatalf("golden: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("golden: %v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		tb.Errorf("golden: %s differs (-update rewrites it): %s", path, firstDiff(want, got))
	}
}

// firstDiff describes the first line where want and got differ.
func firstDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, wl, gl)
		}
	}
	return fmt.Sprintf("same lines, %d bytes want vs %d got", len(want), len(got))
}
