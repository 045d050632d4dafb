// Package runtimetest finds the agent CLIs tests run: the shared install
// that scripts/clis.sh makes ($BULLPEN_CLI_CACHE, else .cache/clis in the
// repository), so `make test` installs them once.
package runtimetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bullpen-hq/bullpen/agents/runtime"
)

// Dir returns the shared CLI install directory.
func Dir(tb testing.TB) string {
	tb.Helper()
	if d := os.Getenv("BULLPEN_CLI_CACHE"); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			tb.Fatal(err)
		}
		return abs
	}
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, ".cache", "clis")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("runtimetest: no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Installer returns an installer over the shared directory in which every
// runtime of rts is installed. A missing one skips the test, or fails it
// under CI=true, saying to run scripts/clis.sh.
func Installer(tb testing.TB, rts ...runtime.Runtime) *runtime.Installer {
	tb.Helper()
	in := &runtime.Installer{Dir: Dir(tb)}
	for _, rt := range rts {
		if in.Installed(rt) {
			continue
		}
		msg := rt.Name() + " is not installed in " + in.Dir + ": run bash scripts/clis.sh (make test does)"
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return in
}
