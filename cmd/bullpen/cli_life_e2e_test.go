package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runBare runs the binary with only the env given (no BULLPEN_URL or
// BULLPEN_TOKEN from runCLI), as a user's fresh shell would.
func runBare(t *testing.T, bin string, stdin string, env []string, args ...string) cliRun {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("bullpen %v: %v", args, err)
	}
	return cliRun{out: out.String(), err: errb.String(), code: code}
}

// Every sandbox verb of the API through the command line, on the real
// binary and a real sandbox: pause, resume, stop and start (files kept),
// snapshot and a create from it, images, ports, stats; and the
// login, global-flag, help and refused-connection paths a new user meets.
func TestCLISandboxVerbsEndToEnd(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("runs the real binary with sandboxes (root)")
	}
	bin := buildBinary(t)
	srv := startServer(t, bin, t.TempDir(), append(os.Environ(), "BULLPEN_TELEGRAM_TOKEN="))
	t.Cleanup(func() { srv.stop(t) })
	url := strings.TrimSuffix(srv.url, "/")

	// Global flags before the command, no env: parsed as the client's.
	id := strings.TrimSpace(runBare(t, bin, "", nil, "--server", url, "--token", srv.token, "sandbox", "create", "--name", "verbs").out)
	if !strings.HasPrefix(id, "sb_") {
		t.Fatalf("create with global flags first printed %q", id)
	}
	t.Cleanup(func() { runCLI(t, bin, srv, nil, "sandbox", "rm", id) })
	must(t, bin, srv, 0, nil, "sandbox", "exec", id, "echo kept > /home/sandbox/f")

	for _, step := range []struct{ verb, state string }{{"pause", "paused"}, {"resume", "running"}, {"stop", "stopped"}, {"start", "running"}} {
		if got := must(t, bin, srv, 0, nil, "sandbox", step.verb, id); got != id+" "+step.state+"\n" {
			t.Fatalf("sandbox %s printed %q, want %q", step.verb, got, id+" "+step.state)
		}
	}
	if got := must(t, bin, srv, 0, nil, "sandbox", "exec", id, "cat /home/sandbox/f"); got != "kept\n" {
		t.Fatalf("after stop/start the file holds %q", got)
	}
	img := strings.TrimSpace(must(t, bin, srv, 0, nil, "sandbox", "snapshot", "--name", "verbs-snap", id))
	if img == "" || !strings.Contains(must(t, bin, srv, 0, nil, "sandbox", "images"), img) {
		t.Fatalf("snapshot printed %q, not listed by sandbox images", img)
	}
	id2 := strings.TrimSpace(must(t, bin, srv, 0, nil, "sandbox", "create", "--image", img))
	t.Cleanup(func() { runCLI(t, bin, srv, nil, "sandbox", "rm", id2) })
	if got := must(t, bin, srv, 0, nil, "sandbox", "exec", id2, "cat /home/sandbox/f"); got != "kept\n" {
		t.Fatalf("a sandbox from the snapshot %q holds %q", img, got)
	}

	if got := must(t, bin, srv, 0, nil, "sandbox", "ports", id, "publish", "8000"); !strings.HasPrefix(got, "8000 -> 127.0.0.1:") {
		t.Fatalf("ports publish printed %q", got)
	}
	if got := must(t, bin, srv, 0, nil, "sandbox", "ports", id); !strings.HasPrefix(got, "8000 -> ") {
		t.Fatalf("ports printed %q", got)
	}
	must(t, bin, srv, 0, nil, "sandbox", "ports", id, "revoke", "8000")
	if got := must(t, bin, srv, 0, nil, "sandbox", "ports", id); got != "" {
		t.Fatalf("ports after revoke printed %q", got)
	}
	must(t, bin, srv, 2, nil, "sandbox", "ports", id, "publish", "99999")
	must(t, bin, srv, 4, nil, "sandbox", "pause", "sb_nosuchsandbox")
	var u struct {
		Pids int64 `json:"pids"`
	}
	if err := json.Unmarshal([]byte(must(t, bin, srv, 0, nil, "sandbox", "stats", "--json", id)), &u); err != nil || u.Pids < 1 {
		t.Fatalf("stats --json: %v %+v", err, u)
	}

	// login: a refused token writes nothing; a good one saves both, mode 0600.
	cfg := filepath.Join(t.TempDir(), "cfg", "cli.json")
	env := []string{"BULLPEN_CONFIG=" + cfg}
	if r := runBare(t, bin, "bp_wrong\n", env, "login", "--server", url); r.code != 3 {
		t.Fatalf("login with a wrong token: exit %d (%s)", r.code, r.err)
	}
	if _, err := os.Stat(cfg); !os.IsNotExist(err) {
		t.Fatalf("a refused login wrote the config: %v", err)
	}
	if r := runBare(t, bin, srv.token+"\n", env, "login", "--server", url); r.code != 0 || !strings.Contains(r.out, "logged in to "+url) {
		t.Fatalf("login: %+v", r)
	}
	if st, err := os.Stat(cfg); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config after login: %v %v", st, err)
	}
	if r := runBare(t, bin, "", env, "sandbox", "ls"); r.code != 0 || !strings.Contains(r.out, id) {
		t.Fatalf("sandbox ls from the saved config: %+v", r)
	}

	// Nobody at the address: the hint names both ways to point elsewhere.
	r := runBare(t, bin, "", nil, "sandbox", "ls", "--token", "x", "--server", "http://"+freeAddr(t))
	if r.code != 1 || !strings.Contains(r.err, "BULLPEN_URL") || !strings.Contains(r.err, "--server") {
		t.Fatalf("refused connection: %+v", r)
	}
	for _, args := range [][]string{{"help"}, {"--help"}} {
		if r := runBare(t, bin, "", nil, args...); r.code != 0 || !strings.Contains(r.out, "sandbox") || !strings.Contains(r.out, "serve") || !strings.Contains(r.out, "login") {
			t.Fatalf("bullpen %v: %+v", args, r)
		}
	}
}
