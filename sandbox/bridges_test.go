package sandbox

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// bridgeServer serves a unix socket that answers each line with
// "BRIDGE:<line>" and counts connections.
func bridgeServer(t *testing.T) (sock string, conns *atomic.Int64) {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "sb-bridge-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock = filepath.Join(dir, "b.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				c.Write([]byte("BRIDGE:" + line))
			}()
		}
	}()
	return sock, conns
}

const pyBridge = `
import socket
s = socket.create_connection(("127.0.0.1", 7777), timeout=5)
s.sendall(b"ping\n")
print(s.recv(100).decode().strip())
`

// TestSecurityBridgeOnly: with network "none" and one bridge, a process in
// the sandbox reaches the host socket through 127.0.0.1:7777, and nothing
// else: no host TCP service on any host address, not the socket file
// itself, not another port.
func TestSecurityBridgeOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sock, conns := bridgeServer(t)
	hostPort, accepted := hostListener(t)
	in := e.create(Spec{Bridges: []Bridge{{Port: 7777, HostSocket: sock}}})
	if got := e.py(in.ID, pyBridge); got != "BRIDGE:ping" {
		t.Fatalf("through the bridge: %q", got)
	}
	if conns.Load() != 1 {
		t.Fatalf("host socket saw %d connections, want 1", conns.Load())
	}
	targets := append(hostAddrs(t, hostPort), "127.0.0.1|"+hostPort, "127.0.0.1|7778", "10.0.0.1|80", "1.1.1.1|443")
	probe := e.py(in.ID, probeCall(hostPort, targets...))
	for _, line := range strings.Split(strings.TrimSpace(probe), "\n") {
		if !strings.Contains(line, " blocked ") {
			t.Errorf("reachable from a sandbox with network none: %s", line)
		}
	}
	if accepted.Load() != 0 {
		t.Fatalf("host service accepted %d connections from the sandbox", accepted.Load())
	}
	// The socket file, its directory and the host's /tmp are not in the
	// sandbox; its own /tmp is empty of them.
	if got := e.sh(in.ID, "ls "+filepath.Dir(sock)+" 2>&1; test -e "+sock+" && echo VISIBLE; true"); strings.Contains(got, "VISIBLE") || strings.Contains(got, "b.sock") {
		t.Fatalf("host socket visible in the sandbox: %q", got)
	}
	// A new init (Stop/Start: new network namespace) gets the bridge again.
	ctx := context.Background()
	if err := e.m.Stop(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.m.Start(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if got := e.py(in.ID, pyBridge); got != "BRIDGE:ping" {
		t.Fatalf("after restart: %q", got)
	}
}

// TestBridgeNoServer: a bridge whose host socket is not served gives the
// sandbox a closed connection, not a hang or another endpoint.
func TestBridgeNoServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	in := e.create(Spec{Bridges: []Bridge{{Port: 7777, HostSocket: "/tmp/bullpen-no-such.sock"}}})
	got := e.py(in.ID, `
import socket
s = socket.create_connection(("127.0.0.1", 7777), timeout=5)
try:
    s.sendall(b"ping\n")
    print("closed" if s.recv(100) == b"" else "DATA")
except (ConnectionResetError, BrokenPipeError):
    print("closed")
`)
	if got != "closed" {
		t.Fatalf("unserved bridge: %q", got)
	}
}
