package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/client"
)

// readmeExample is one fenced sh block of the README or a docs/ page,
// marked as a runnable example by an "<!-- example -->" line before it.
type readmeExample struct {
	file string
	line int
	code string
}

// readmeExamples reads the marked examples of the README and of every
// docs/ page, in the order of docPages.
func readmeExamples(t *testing.T) []readmeExample {
	t.Helper()
	var out []readmeExample
	for _, page := range docPages(t) {
		out = append(out, pageExamples(t, page)...)
	}
	return out
}

// pageExamples reads the marked examples of one page. A block may be
// indented (inside a list item): its lines lose the fence's indentation.
func pageExamples(t *testing.T, path string) []readmeExample {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []readmeExample
	var cur *readmeExample
	indent := ""
	marked := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur != nil && strings.HasPrefix(trimmed, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.code += strings.TrimPrefix(line, indent) + "\n"
		case trimmed == "<!-- example -->":
			marked = true
		case marked && strings.HasPrefix(trimmed, "```sh"):
			indent = line[:len(line)-len(strings.TrimLeft(line, " "))]
			cur, marked = &readmeExample{file: strings.TrimPrefix(path, "../../"), line: n}, false
		case trimmed != "":
			marked = false
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// placeholder is a line that sets a variable to a value the reader fills
// in ("export BULLPEN_TOKEN=bp_…"): the test provides those.
var placeholder = regexp.MustCompile(`^\s*(export\s+)?[A-Z_]+=\S*…`)

// expect is an annotation "# → TEXT": the example's output contains TEXT.
var expect = regexp.MustCompile(`#[^#]*→\s*(.+?)\s*$`)

// Every example the README and the docs/ pages mark runs as written, in
// order, against one real server with sandboxes: the curl lines and the
// bullpen CLI lines, each must succeed and print what its "# →"
// annotation says.
func TestREADMEExamples(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("runs the examples of the README and docs/ against the real binary with sandboxes (root)")
	}
	exs := readmeExamples(t)
	if len(exs) < 4 {
		t.Fatalf("found %d marked examples in the README and docs/; the marker or the reader is broken", len(exs))
	}
	bin := buildBinary(t)
	srv := startServer(t, bin, t.TempDir(), append(os.Environ(), "BULLPEN_TELEGRAM_TOKEN="))
	t.Cleanup(func() { srv.stop(t) })
	t.Cleanup(func() { terminateAll(t, srv) }) // the examples leave sandboxes running
	addr := strings.TrimSuffix(strings.TrimPrefix(srv.url, "http://"), "/")
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "BULLPEN_URL=http://"+addr,
		"BULLPEN_TOKEN="+srv.token, "TOKEN="+srv.token, "BULLPEN_CONFIG=")
	for _, ex := range exs {
		var script strings.Builder
		var wants []string
		for _, line := range strings.Split(ex.code, "\n") {
			if placeholder.MatchString(line) {
				continue
			}
			if m := expect.FindStringSubmatch(line); m != nil {
				wants = append(wants, m[1])
			}
			script.WriteString(strings.ReplaceAll(line, "localhost:8080", addr) + "\n")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script.String())
		cmd.WaitDelay = time.Second
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("example at %s:%d failed: %v\n%s\noutput:\n%s", ex.file, ex.line, err, ex.code, out)
		}
		for _, w := range wants {
			if !strings.Contains(string(out), w) {
				t.Errorf("example at %s:%d: output lacks %q\n%s\noutput:\n%s", ex.file, ex.line, w, ex.code, out)
			}
		}
	}
}

// terminateAll terminates every sandbox of srv.
func terminateAll(t *testing.T, srv *server) {
	c, err := client.New(srv.url, srv.token)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sbs, err := c.Sandboxes(ctx, nil, false)
	if err != nil {
		t.Errorf("list sandboxes: %v", err)
	}
	for _, sb := range sbs {
		if err := c.TerminateSandbox(ctx, sb.ID); err != nil {
			t.Errorf("terminate %s: %v", sb.ID, err)
		}
	}
}
