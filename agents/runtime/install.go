package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/bullpen-hq/bullpen"
)

// installedMarker is written once an install completed (scripts/clis.sh
// writes the same), so a half-done install is never taken for a good one.
const installedMarker = ".installed"

// Installer installs CLIs with npm into Dir/<Install.Dir()>, the layout
// scripts/clis.sh makes and sandboxes mount read-only.
type Installer struct {
	Dir string // e.g. <data dir>/clis
	// LookPath finds node and npm; nil means exec.LookPath.
	LookPath func(string) (string, error)
	mu       sync.Mutex
}

// InstallerIn is the installer of a server's CLIs: <dataDir>/clis.
func InstallerIn(dataDir string) *Installer { return &Installer{Dir: filepath.Join(dataDir, "clis")} }

// Path is where rt is (or would be) installed.
func (in *Installer) Path(rt Runtime) string { return filepath.Join(in.Dir, rt.Install().Dir()) }

// Installed reports whether rt is installed completely.
func (in *Installer) Installed(rt Runtime) bool {
	_, err := os.Stat(filepath.Join(in.Path(rt), installedMarker))
	return err == nil
}

// Ensure installs rt unless it is installed and returns its directory.
// Missing node or npm, or a failed install, is an EUNAVAILABLE error that
// says what is missing and which command to run.
func (in *Installer) Ensure(ctx context.Context, rt Runtime) (string, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	dest := in.Path(rt)
	if in.Installed(rt) {
		// An install made before a file was added to the runtime gets it
		// now (writing a file that is there already changes nothing).
		return dest, writeFiles(dest, rt.Install().Files)
	}
	look := in.LookPath
	if look == nil {
		look = exec.LookPath
	}
	if _, err := look("node"); err != nil {
		return "", bullpen.Errorf(bullpen.EUNAVAILABLE, "runtime: %s needs node, which is not installed (Node.js): install Node.js 20 or newer with npm (e.g. apt-get install -y nodejs npm), then run: bullpen install-clis", rt.Name())
	}
	npm, err := look("npm")
	if err != nil {
		return "", bullpen.Errorf(bullpen.EUNAVAILABLE, "runtime: %s needs npm, which is not installed: install npm (e.g. apt-get install -y npm), then run: bullpen install-clis", rt.Name())
	}
	if err := os.MkdirAll(in.Dir, 0o755); err != nil {
		return "", fmt.Errorf("runtime: clis dir: %w", err)
	}
	return dest, in.npmInstall(ctx, npm, rt, dest)
}

func (in *Installer) npmInstall(ctx context.Context, npm string, rt Runtime, dest string) error {
	spec := rt.Install().Spec()
	tmp := dest + ".tmp"
	_ = os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error", spec)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		_ = os.RemoveAll(tmp)
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "runtime: npm install %s failed (%v): %s; retry with: npm install --prefix %s %s",
			spec, err, lastLines(out.String(), 5), dest, spec)
	}
	if _, err := os.Stat(filepath.Join(tmp, rt.Install().Bin)); err != nil {
		_ = os.RemoveAll(tmp)
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "runtime: npm installed %s but its executable %s is missing", spec, rt.Install().Bin)
	}
	if err := writeFiles(tmp, rt.Install().Files); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := os.RemoveAll(dest); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("runtime: replace %s: %w", dest, err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("runtime: install %s: %w", spec, err)
	}
	return os.WriteFile(filepath.Join(dest, installedMarker), nil, 0o644)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// writeFiles writes an install's own files into dir, each unless it is
// there with the same content.
func writeFiles(dir string, files map[string]string) error {
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if b, err := os.ReadFile(p); err == nil && string(b) == content {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("runtime: install file %s: %w", rel, err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return fmt.Errorf("runtime: install file %s: %w", rel, err)
		}
	}
	return nil
}
