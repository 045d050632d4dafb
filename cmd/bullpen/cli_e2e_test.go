package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/client"
	"github.com/bullpen-hq/bullpen/view"
)

// cliRun is one run of the client commands of the real binary.
type cliRun struct {
	out, err string
	code     int
}

// runCLI runs `bin args...` against srv with stdin, as a script would.
func runCLI(t *testing.T, bin string, srv *server, stdin []byte, args ...string) cliRun {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "BULLPEN_URL="+strings.TrimSuffix(srv.url, "/"), "BULLPEN_TOKEN="+srv.token, "BULLPEN_CONFIG=")
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("bullpen %v: %v", args, err)
	}
	return cliRun{out: out.String(), err: errb.String(), code: code}
}

// must runs the CLI and fails the test unless it exits with want.
func must(t *testing.T, bin string, srv *server, want int, stdin []byte, args ...string) string {
	t.Helper()
	r := runCLI(t, bin, srv, stdin, args...)
	if r.code != want {
		t.Fatalf("bullpen %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, want, r.out, r.err)
	}
	return r.out
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// The command line client against the real binary and a real sandbox:
// create, exec with stdin and exit codes, a 20 MB file in and out with
// equal checksums, ls and rm, with the exit codes scripts rely on.
func TestCLISandboxEndToEnd(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("runs the real binary with sandboxes (root)")
	}
	bin := buildBinary(t)
	srv := startServer(t, bin, t.TempDir(), append(os.Environ(), "BULLPEN_TELEGRAM_TOKEN="))
	t.Cleanup(func() { srv.stop(t) }) // a clean stop unmounts the sandboxes' disks
	id := strings.TrimSpace(must(t, bin, srv, 0, nil, "sandbox", "create", "--name", "cli-e2e", "--memory", "256Mi", "--tag", "by=cli"))
	if !strings.HasPrefix(id, "sb_") {
		t.Fatalf("create printed %q, want a sandbox ID", id)
	}
	t.Cleanup(func() { runCLI(t, bin, srv, nil, "sandbox", "rm", id) })

	if got := must(t, bin, srv, 0, []byte("hello from stdin\n"), "sandbox", "exec", "-i", id, "--", "tr", "a-z", "A-Z"); got != "HELLO FROM STDIN\n" {
		t.Fatalf("exec with stdin printed %q", got)
	}
	r := runCLI(t, bin, srv, nil, "sandbox", "exec", id, "echo to-err >&2; echo to-out; exit 7")
	if r.code != 7 || r.out != "to-out\n" || !strings.Contains(r.err, "to-err") {
		t.Fatalf("exec exit 7: %+v", r)
	}
	if r := runCLI(t, bin, srv, nil, "sandbox", "exec", "--timeout", "300ms", id, "--", "sleep", "30"); r.code != 124 {
		t.Fatalf("timed-out exec: exit %d, want 124 (%s)", r.code, r.err)
	}

	dir := t.TempDir()
	big := make([]byte, 20<<20)
	rand.Read(big)
	in := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(in, big, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(big)
	want := hex.EncodeToString(sum[:])
	must(t, bin, srv, 0, nil, "sandbox", "cp", in, id+":/home/sandbox/big.bin")
	if got := must(t, bin, srv, 0, nil, "sandbox", "exec", id, "--", "sha256sum", "/home/sandbox/big.bin"); !strings.HasPrefix(got, want) {
		t.Fatalf("checksum inside the sandbox %q, want %s", got, want)
	}
	outPath := filepath.Join(dir, "back.bin")
	must(t, bin, srv, 0, nil, "sandbox", "cp", id+":/home/sandbox/big.bin", outPath)
	back, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	if s := sha256.Sum256(back); hex.EncodeToString(s[:]) != want {
		t.Fatalf("copied back %d bytes with another checksum", len(back))
	}

	if ls := must(t, bin, srv, 0, nil, "sandbox", "ls", id+":/home/sandbox"); !strings.Contains(ls, "big.bin") || !strings.Contains(ls, "20971520") {
		t.Fatalf("ls of the workdir:\n%s", ls)
	}
	var listed []client.Sandbox
	if err := json.Unmarshal([]byte(must(t, bin, srv, 0, nil, "sandbox", "ls", "--json")), &listed); err != nil || len(listed) != 1 || listed[0].ID != id || listed[0].Tags["by"] != "cli" {
		t.Fatalf("ls --json: %v %+v", err, listed)
	}
	must(t, bin, srv, 0, nil, "sandbox", "rm", id+":/home/sandbox/big.bin")
	must(t, bin, srv, 0, nil, "sandbox", "rm", id)
	must(t, bin, srv, 4, nil, "sandbox", "ls", id+":/")  // gone: not found
	must(t, bin, srv, 2, nil, "sandbox", "cp", "a", "b") // usage: no sandbox side
	must(t, bin, srv, 2, nil, "sandbox", "exec", id)     // usage: no command
	must(t, bin, srv, 2, nil, "sandbox", "frobnicate")   // usage: unknown command
	bad := *srv
	bad.token = "bp_not_a_real_token_at_all"
	must(t, bin, &bad, 3, nil, "sandbox", "ls") // refused credential
}

// post, agents and wiki through the CLI, with --json output and the
// conflict exit code.
func TestCLIOfficeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real binary")
	}
	bin := buildBinary(t)
	srv := startServer(t, bin, t.TempDir(), append(os.Environ(), "BULLPEN_SANDBOXES=off", "BULLPEN_TELEGRAM_TOKEN="))
	var hired view.Hired
	if err := json.Unmarshal([]byte(must(t, bin, srv, 0, nil, "agents", "hire", "--json", "--handle", "qa", "starter/engineer")), &hired); err != nil || hired.Agent.Handle != "qa" || !strings.HasPrefix(hired.Token, bullpen.TokenPrefix) {
		t.Fatalf("hire: %v %+v", err, hired)
	}
	if out := must(t, bin, srv, 0, nil, "agents", "team"); !(strings.Contains(out, "hired @lead") && strings.Contains(out, "hired @engineer") && strings.Contains(out, "hired @pm") && strings.Contains(out, "hired @designer") && strings.Contains(out, "starter team: 4 hired")) || strings.Contains(out, "token") {
		t.Fatalf("agents team:\n%s", out)
	}
	if out := must(t, bin, srv, 0, nil, "agents", "team", "starter"); !strings.Contains(out, "starter team: already hired") {
		t.Fatalf("agents team, a second time:\n%s", out)
	}
	must(t, bin, srv, 4, nil, "agents", "team", "no-such-pack")
	must(t, bin, srv, 2, nil, "agents", "team", "a", "b")
	if ls := must(t, bin, srv, 0, nil, "agents", "list"); !strings.Contains(ls, "@qa") || !strings.Contains(ls, "builtin") {
		t.Fatalf("agents list:\n%s", ls)
	}
	var m bullpen.Message
	if err := json.Unmarshal([]byte(must(t, bin, srv, 0, nil, "post", "--json", "#general", "hello @qa from the CLI")), &m); err != nil || m.Body != "hello @qa from the CLI" {
		t.Fatalf("post: %v %+v", err, m)
	}
	must(t, bin, srv, 4, nil, "post", "#no-such-channel", "hi")
	must(t, bin, srv, 0, nil, "agents", "fire", "@qa")
	must(t, bin, srv, 4, nil, "agents", "fire", "@qa") // no active @qa any more

	must(t, bin, srv, 0, []byte("# Runbook\n\nRestart with care.\n"), "wiki", "put", "runbook", "--title", "Runbook")
	if got := must(t, bin, srv, 0, nil, "wiki", "get", "runbook"); !strings.Contains(got, "Restart with care.") {
		t.Fatalf("wiki get: %q", got)
	}
	must(t, bin, srv, 0, []byte("Restart with great care.\n"), "wiki", "put", "runbook", "-m", "more care")
	must(t, bin, srv, 5, []byte("a stale edit\n"), "wiki", "put", "runbook", "--base", "1") // revision 2 exists
	if got := must(t, bin, srv, 0, nil, "wiki", "get", "runbook"); !strings.Contains(got, "great care") {
		t.Fatalf("the stale save changed the page: %q", got)
	}
	if hits := must(t, bin, srv, 0, nil, "wiki", "search", "restart"); !strings.Contains(hits, "runbook") {
		t.Fatalf("wiki search: %q", hits)
	}
}

// `bullpen tail` follows the feed across a server restart: every event
// the office stored while it ran is printed once, in order, with no gap.
func TestCLITailAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs and restarts the real binary")
	}
	bin := buildBinary(t)
	data, addr := t.TempDir(), freeAddr(t)
	env := append(os.Environ(), "BULLPEN_SANDBOXES=off", "BULLPEN_TELEGRAM_TOKEN=")
	srv := startServerAt(t, bin, data, addr, env)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tail := exec.CommandContext(ctx, bin, "tail", "--json", "--since", "0", "--type", "message.posted")
	tail.Env = append(os.Environ(), "BULLPEN_URL="+strings.TrimSuffix(srv.url, "/"), "BULLPEN_TOKEN="+srv.token, "BULLPEN_CONFIG=")
	out, err := tail.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderrMu sync.Mutex
	var stderrBuf bytes.Buffer
	tail.Stderr = lockedWriter{&stderrMu, &stderrBuf}
	stderr := func() string { stderrMu.Lock(); defer stderrMu.Unlock(); return stderrBuf.String() }
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan bullpen.Event, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var ev bullpen.Event
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				lines <- ev
			}
		}
		close(lines)
	}()
	for i := range 3 {
		must(t, bin, srv, 0, nil, "post", "#general", "before restart "+string(rune('a'+i)))
	}
	srv.stop(t)
	srv = startServerAt(t, bin, data, addr, env)
	for i := range 3 {
		must(t, bin, srv, 0, nil, "post", "#general", "after restart "+string(rune('a'+i)))
	}
	var got []bullpen.Event
	for len(got) < 6 {
		select {
		case ev, ok := <-lines:
			if !ok {
				t.Fatalf("tail ended after %d events: %s", len(got), stderr())
			}
			got = append(got, ev)
		case <-time.After(30 * time.Second):
			t.Fatalf("tail printed %d of 6 messages in 30 s: %s", len(got), stderr())
		}
	}
	c, err := client.New(srv.url, srv.token)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := c.Events(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, ev := range stored {
		if ev.Type == "message.posted" {
			want = append(want, ev.Seq)
		}
	}
	if len(want) != 6 {
		t.Fatalf("stored %d message events, want 6", len(want))
	}
	for i, ev := range got {
		if ev.Seq != want[i] {
			t.Fatalf("tail printed seq %d as event %d, the log has %d (printed %v, stored %v)", ev.Seq, i, want[i], seqs(got), want)
		}
	}
	if !strings.Contains(stderr(), "reconnecting") {
		t.Errorf("tail did not say it reconnected: %q", stderr())
	}
}

func seqs(evs []bullpen.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}
