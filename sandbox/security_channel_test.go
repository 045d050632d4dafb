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
	"golang.org/x/sys/unix"
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
	pid, sock, key := s.proc.pid, s.sock, s.proc.key
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
		if err := pingInit(sock, pid, key); err != nil {
			t.Fatalf("the host's own ping: %v", err)
		}
	})
	t.Run("host talks only to init", func(t *testing.T) {
		got, stop := impostor(t, sock)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := e.m.Run(ctx, id, ExecRequest{Cmd: []string{"true"}, Env: map[string]string{"K": "exec-secret"}})
		wantCode(t, err, bullpen.ECONFLICT)
		if err := pingInit(sock, pid, key); err == nil {
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
	t.Run("a stolen listener gets no request", func(t *testing.T) {
		// As if init's listener had leaked to another process: take a
		// copy of it and accept on it, racing init.
		pfd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			t.Fatal(err)
		}
		lfd, err := unix.PidfdGetfd(pfd, 3, 0) // sbinit.ListenFd
		unix.Close(pfd)
		if err != nil {
			t.Fatal(err)
		}
		lf := os.NewFile(uintptr(lfd), "stolen listener")
		ln, err := net.FileListener(lf)
		lf.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1000)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				// A guessed hello, then whatever the host sends.
				_, _ = c.Write(append([]byte{0, 0, 0, 17}, `{"hello":"guess"}`...))
				_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
				b, _ := io.ReadAll(c)
				c.Close()
				got <- string(b)
			}
		}()
		// Every exec dials here: a kept connection, already checked and
		// connected to init, is out of a thief's reach, so keeping them
		// would only hide the dials this attacks.
		sb, err := e.m.lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		sb.conns.mu.Lock()
		sb.conns.off = true
		sb.conns.mu.Unlock()
		stolen := 0
		for i := 0; i < 200 && stolen < 3; i++ {
			r, err := e.m.Run(context.Background(), id, ExecRequest{Cmd: []string{"sh", "-c", "echo $K; exit 3"},
				Env: map[string]string{"K": "exec-secret"}})
			if err != nil { // the thief's connection has ended
				stolen++
				if b := <-got; b != "" {
					t.Fatalf("the host sent %q to the thief", b)
				}
				if !bullpen.IsCode(err, bullpen.ECONFLICT) {
					t.Fatalf("exec %d: %v", i, err)
				}
			} else if string(r.Stdout) != "exec-secret\n" || r.ExitCode != 3 {
				t.Fatalf("exec %d: %q exit %d", i, r.Stdout, r.ExitCode)
			}
		}
		ln.Close()
		if stolen == 0 {
			t.Fatal("the stolen listener never accepted a connection: the test proved nothing")
		}
		t.Logf("%d connections went to the thief, none got a byte", stolen)
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
		// The Manager pings an init it finds alive, and the impostor must
		// learn nothing from that; an init it finds dead it does not dial
		// at all. Either way nothing may reach the impostor, and the wait
		// is bounded (a bare receive hung a CI run for 13 minutes).
		select {
		case b := <-got:
			if b != "" {
				t.Errorf("the adoption ping went to an impostor: %q", b)
			}
		case <-time.After(15 * time.Second):
			t.Log("the restarted Manager did not dial the impostor")
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
