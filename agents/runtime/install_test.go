package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// fakeNPM writes an npm that runs script (sh) and returns a LookPath
// finding it and node.
func fakeNPM(t *testing.T, script string) func(string) (string, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "npm")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return func(name string) (string, error) {
		if name == "npm" {
			return p, nil
		}
		return "/usr/bin/" + name, nil
	}
}

func TestInstallMissingTools(t *testing.T) {
	for _, missing := range []string{"node", "npm"} {
		in := &Installer{Dir: t.TempDir(), LookPath: func(n string) (string, error) {
			if n == missing {
				return "", errors.New("not found")
			}
			return "/usr/bin/" + n, nil
		}}
		_, err := in.Ensure(context.Background(), ClaudeCode{})
		if !bullpen.IsCode(err, bullpen.EUNAVAILABLE) || !strings.Contains(err.Error(), missing+", which is not installed") ||
			!strings.Contains(err.Error(), "bullpen install-clis") {
			t.Errorf("missing %s: %v", missing, err)
		}
	}
}

// TestInstallFailure: a failing npm leaves nothing behind and the error
// quotes npm and says what to run.
func TestInstallFailure(t *testing.T) {
	in := &Installer{Dir: t.TempDir(), LookPath: fakeNPM(t, "echo 'npm error 404 Not Found' >&2; exit 1\n")}
	_, err := in.Ensure(context.Background(), Codex{})
	if !bullpen.IsCode(err, bullpen.EUNAVAILABLE) || !strings.Contains(err.Error(), "404 Not Found") ||
		!strings.Contains(err.Error(), "npm install --prefix "+in.Path(Codex{})+" @openai/codex@0.169.0") {
		t.Fatalf("failed install: %v", err)
	}
	if ents, _ := os.ReadDir(in.Dir); len(ents) != 0 || in.Installed(Codex{}) {
		t.Fatalf("left behind: %v", ents)
	}
}

// TestInstallOnce: a good install is marked and not run again; npm gets
// the pinned spec and a --prefix of its own.
func TestInstallOnce(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls")
	script := `echo "$@" >> ` + log + `
while [ "$1" != "--prefix" ]; do shift; done
mkdir -p "$2/node_modules/.bin" && touch "$2/node_modules/.bin/claude"
`
	in := &Installer{Dir: filepath.Join(t.TempDir(), "clis"), LookPath: fakeNPM(t, script)}
	for i := 0; i < 2; i++ {
		dir, err := in.Ensure(context.Background(), ClaudeCode{})
		if err != nil || dir != in.Path(ClaudeCode{}) {
			t.Fatalf("Ensure: %q %v", dir, err)
		}
	}
	b, _ := os.ReadFile(log)
	if n := strings.Count(string(b), "\n"); n != 1 || !strings.Contains(string(b), "@anthropic-ai/claude-code@2.1.328") {
		t.Fatalf("npm calls: %q", b)
	}
	if !in.Installed(ClaudeCode{}) {
		t.Fatal("not marked installed")
	}
}

// TestInstallNoBinary: npm succeeding without the CLI's executable is an
// error, not an install.
func TestInstallNoBinary(t *testing.T) {
	in := &Installer{Dir: t.TempDir(), LookPath: fakeNPM(t, "exit 0\n")}
	if _, err := in.Ensure(context.Background(), OpenCode{}); err == nil || !strings.Contains(err.Error(), "executable") {
		t.Fatalf("got %v", err)
	}
}
