package sandbox

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
)

// pyPing connects to the control socket (argv[1]), sends a ping frame and
// prints what came back: "reply ..." or "closed" (hung up, no answer).
const pyPing = `
import socket, struct, sys, json
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
body = json.dumps({"op": "ping"}).encode()
try:
    s.sendall(struct.pack(">I", len(body)) + body)
    b = s.recv(100)
except (BrokenPipeError, ConnectionResetError):
    b = b""
print("reply %r" % b if b else "closed")
`

// TestSecurityControlChannelTakeover checks both ends of the host↔init
// channel's authentication, with file permissions out of the way: init
// answers nothing but the host, and the host talks to nothing but init.
func TestSecurityControlChannelTakeover(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.create(Spec{}).ID
	s, err := e.m.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	pid, sock := s.proc.pid, s.sock
	s.mu.Unlock()
	t.Run("init answers only the host", func(t *testing.T) {
		// Loosen the socket's mode: the peer check alone must stop these.
		if err := os.Chmod(sock, 0o666); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(sock, 0o600)
		p := strconv.Itoa(pid)
		for _, c := range []struct{ name, args string }{
			{"a command of the sandbox", "-t " + p + " -U -p -S 1000 -G 1000"},
			{"the sandbox's root, in its pid namespace", "-t " + p + " -U -p -S 0 -G 0"},
			{"another sandbox's command (outside this pid namespace)", "-t " + p + " -U -S 1000 -G 1000"},
		} {
			args := append(strings.Fields(c.args), "--", "/usr/bin/python3", "-c", pyPing, sock)
			cmd := exec.Command("nsenter", args...)
			cmd.Dir = "/"
			out, err := cmd.CombinedOutput()
			if got := strings.TrimSpace(string(out)); err != nil || got != "closed" {
				t.Errorf("%s: %q (%v), want the connection closed unanswered", c.name, got, err)
			}
		}
		if err := pingInit(sock, pid); err != nil {
			t.Fatalf("the host's own ping: %v", err)
		}
	})
	t.Run("host talks only to init", func(t *testing.T) {
		got, stop := impostor(t, sock)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := e.m.Run(ctx, id, ExecRequest{Cmd: []string{"true"}, Env: map[string]string{"K": "exec-secret"}})
		wantCode(t, err, bullpen.ECONFLICT)
		if err := pingInit(sock, pid); err == nil {
			t.Error("an adoption ping answered by an impostor was accepted")
		}
		for i := 0; i < 2; i++ {
			if b := <-got; b != "" {
				t.Errorf("the host sent %q to an impostor", b)
			}
		}
		stop()
		if err := os.Rename(sock+".real", sock); err != nil {
			t.Fatal(err)
		}
		if out := e.sh(id, "echo back"); out != "back\n" {
			t.Fatalf("after the impostor left: %q", out)
		}
	})
	t.Run("a restarted Manager adopts only a verified init", func(t *testing.T) {
		ctx := context.Background()
		e.m.Close()
		got, stop := impostor(t, sock)
		m2, err := New(ctx, e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		e.m = m2
		stop()
		if g, err := m2.Get(ctx, id); err != nil || g.State != StateStopped {
			t.Errorf("sandbox whose socket an impostor holds: %+v %v, want it stopped", g, err)
		}
		if b := <-got; b != "" {
			t.Errorf("the adoption ping went to an impostor: %q", b)
		}
		os.Remove(sock + ".real")
		if err := m2.Start(ctx, id); err != nil {
			t.Fatal(err)
		}
		if out := e.sh(id, "echo again"); out != "again\n" {
			t.Fatalf("after a fresh start: %q", out)
		}
	})
}

// impostor moves the control socket at sock aside (to sock+".real") and
// listens at its path; got yields what each connection sent.
func impostor(t *testing.T, sock string) (got chan string, stop func()) {
	t.Helper()
	if err := os.Rename(sock, sock+".real"); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	got = make(chan string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// Read what the host sends until it hangs up (or 2 s, should
			// it wait for an answer).
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			b, _ := io.ReadAll(c)
			c.Close()
			got <- string(b)
		}
	}()
	return got, func() { ln.Close() }
}
