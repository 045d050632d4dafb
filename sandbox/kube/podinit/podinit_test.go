package podinit

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be the helper (PODINIT_MAIN=1), so that a
// test runs it as its own process, as the Pod does.
func TestMain(m *testing.M) {
	if os.Getenv("PODINIT_MAIN") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// runBin runs the helper as a process.
func runBin(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	c := exec.Command(os.Args[0], args...)
	c.Env = append(os.Environ(), "PODINIT_MAIN=1")
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), errb.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// TestFileOps: the file operations the driver runs through exec, with the
// exit statuses it maps to error codes.
func TestFileOps(t *testing.T) {
	d := t.TempDir()
	p := filepath.Join(d, "a.txt")
	if _, e, c := run(t, "hello", "file", "write", p, "600"); c != 0 {
		t.Fatalf("write: %d %s", c, e)
	}
	if o, _, c := run(t, "", "file", "read", p); o != "hello" || c != 0 {
		t.Errorf("read = %q, %d; want hello, 0", o, c)
	}
	o, _, c := run(t, "", "file", "stat", p)
	var fi FileInfo
	if err := json.Unmarshal([]byte(o), &fi); err != nil || c != 0 || fi.Size != 5 || fi.Mode.Perm() != 0o600 || fi.Name != "a.txt" {
		t.Errorf("stat = %q (%v), %d; want a.txt, 5 bytes, 0600", o, err, c)
	}
	if _, _, c := run(t, "", "file", "read", filepath.Join(d, "nope")); c != ExitNotFound {
		t.Errorf("read of a missing file exits %d, want %d", c, ExitNotFound)
	}
	if _, _, c := run(t, "", "file", "mkdir", filepath.Join(d, "x", "y")); c != ExitNotFound {
		t.Errorf("mkdir without -p exits %d, want %d", c, ExitNotFound)
	}
	if _, _, c := run(t, "", "file", "mkdir", filepath.Join(d, "x", "y"), "-p"); c != 0 {
		t.Errorf("mkdir -p exits %d", c)
	}
	if _, _, c := run(t, "", "file", "mkdir", filepath.Join(d, "x")); c != ExitExists {
		t.Errorf("mkdir of an existing dir exits %d, want %d", c, ExitExists)
	}
	if _, _, c := run(t, "", "file", "remove", filepath.Join(d, "x")); c != ExitExists {
		t.Errorf("remove of a non-empty dir exits %d, want %d", c, ExitExists)
	}
	if _, _, c := run(t, "", "file", "rename", p, filepath.Join(d, "x", "b.txt")); c != 0 {
		t.Errorf("rename exits %d", c)
	}
	o, _, _ = run(t, "", "file", "list", filepath.Join(d, "x"))
	var list []FileInfo
	if err := json.Unmarshal([]byte(o), &list); err != nil || len(list) != 2 {
		t.Errorf("list = %q (%v), want b.txt and y", o, err)
	}
	if _, _, c := run(t, "", "file", "remove", filepath.Join(d, "x"), "-r"); c != 0 {
		t.Errorf("remove -r exits %d", c)
	}
	if _, err := os.Stat(filepath.Join(d, "x")); !os.IsNotExist(err) {
		t.Errorf("x still there after remove -r: %v", err)
	}
}

// TestExec: the command gets its directory, the extra environment over
// the helper's, stdin, and its exit status comes back.
func TestExec(t *testing.T) {
	d := t.TempDir()
	t.Setenv("FROM_CONTAINER", "c")
	o, e, c := run(t, "in", "exec", "tag1", d, "1", "X=1", "--", "sh", "-c", `cat; echo " $X $FROM_CONTAINER $(pwd)"; exit 7`)
	if want := "in 1 c " + d + "\n"; o != want || c != 7 {
		t.Errorf("exec = %q %q, %d; want %q, 7", o, e, c, want)
	}
	if _, _, c := run(t, "", "exec", "tag2", d, "0", "--", "no-such-command-here"); c != 127 {
		t.Errorf("exec of a missing command exits %d, want 127", c)
	}
}

// TestKillBeforeExec: a kill that arrives before its exec has started
// still kills it.
func TestKillBeforeExec(t *testing.T) {
	done := make(chan int, 1)
	go func() { _, _, c := run(t, "", "kill", "early"); done <- c }()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	_, _, code := runBin(t, "exec", "early", t.TempDir(), "0", "--", "sleep", "30")
	// 137: the command was killed; -1: the helper itself was, before it
	// started the command (SIGTERM before its handler was set).
	if (code != 128+9 && code != -1) || time.Since(start) > 10*time.Second {
		t.Errorf("exec overtaken by its kill exited %d after %s, want killed", code, time.Since(start))
	}
	if c := <-done; c != 0 {
		t.Errorf("kill exited %d", c)
	}
}

// TestStats reads cgroup v2 and v1 layouts.
func TestStats(t *testing.T) {
	defer func(r string) { cgroupRoot = r }(cgroupRoot)
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v2 := t.TempDir()
	write(v2+"/memory.current", "1048576\n")
	write(v2+"/pids.current", "3\n")
	write(v2+"/cpu.stat", "usage_usec 2500000\nuser_usec 1\n")
	v1 := t.TempDir()
	write(v1+"/memory/memory.usage_in_bytes", "2048\n")
	write(v1+"/pids/pids.current", "5\n")
	write(v1+"/cpu,cpuacct/cpuacct.usage", "1500000000\n")
	for _, c := range []struct {
		root string
		want Usage
	}{{v2, Usage{2.5, 1 << 20, 3}}, {v1, Usage{1.5, 2048, 5}}} {
		cgroupRoot = c.root
		o, _, code := run(t, "", "stats")
		var u Usage
		if err := json.Unmarshal([]byte(o), &u); err != nil || code != 0 || u != c.want {
			t.Errorf("stats = %q (%v), %d; want %+v", o, err, code, c.want)
		}
	}
}
