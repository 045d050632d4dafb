package podinit

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// bridgeCall asks serve at addr for the next connection to port.
func bridgeCall(ctx context.Context, addr, token string, port int) (net.Conn, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return Bridge(ctx, conn, token, port)
}

// TestServeBridge: a command's connection to the bridge's loopback port
// is handed to the driver's bridge request, and bytes go both ways,
// half-closes included; the bridge port is listened on before serve
// says it serves.
func TestServeBridge(t *testing.T) {
	port := freePort(t)
	addr := startServe(t, "tok-bridge", BridgeEnv+"="+strconv.Itoa(port))
	got := make(chan net.Conn, 1)
	errc := make(chan error, 1)
	go func() {
		c, err := bridgeCall(context.Background(), addr, "tok-bridge", port)
		errc <- err
		got <- c
	}()
	cmd, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("the command could not reach the bridge: %v", err)
	}
	defer cmd.Close()
	if err := <-errc; err != nil {
		t.Fatalf("Bridge: %v", err)
	}
	up := <-got
	defer up.Close()
	if _, err := cmd.Write([]byte("ping from the sandbox")); err != nil {
		t.Fatal(err)
	}
	cmd.(*net.TCPConn).CloseWrite()
	b, err := io.ReadAll(up)
	if err != nil || string(b) != "ping from the sandbox" {
		t.Fatalf("the driver read %q, %v", b, err)
	}
	if _, err := up.Write([]byte("pong from bullpen")); err != nil {
		t.Fatal(err)
	}
	up.(*net.TCPConn).CloseWrite()
	b, err = io.ReadAll(cmd)
	if err != nil || string(b) != "pong from bullpen" {
		t.Fatalf("the command read %q, %v", b, err)
	}
}

// TestServeBridgeRefuses: a bridge request without the token, with a
// wrong one, for a port that is no bridge, or malformed, is refused and
// takes no connection: the command's connection made meanwhile goes to
// the right request that follows.
func TestServeBridgeRefuses(t *testing.T) {
	port := freePort(t)
	addr := startServe(t, "right-token", BridgeEnv+"="+strconv.Itoa(port))
	cmd, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer cmd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tc := range []struct {
		token string
		port  int
	}{{"", port}, {"wrong-token", port}, {"right-toke", port}, {"right-token", port + 1}, {"right-token", 0}} {
		c, err := bridgeCall(ctx, addr, tc.token, tc.port)
		if !errors.Is(err, ErrRefused) {
			if c != nil {
				c.Close()
			}
			t.Fatalf("bridge with token %q port %d: %v, want refused", tc.token, tc.port, err)
		}
	}
	c, err := bridgeCall(ctx, addr, "right-token", port)
	if err != nil {
		t.Fatalf("the right request: %v", err)
	}
	defer c.Close()
	cmd.Write([]byte("x"))
	var one [1]byte
	if _, err := io.ReadFull(c, one[:]); err != nil || one[0] != 'x' {
		t.Fatalf("the right request read %q, %v", one[:], err)
	}
}

// TestServeBridgeClientGone: a bridge request whose client goes while it
// waits takes no connection; the command's next connection goes to the
// next request.
func TestServeBridgeClientGone(t *testing.T) {
	port := freePort(t)
	addr := startServe(t, "tok", BridgeEnv+"="+strconv.Itoa(port))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := bridgeCall(ctx, addr, "tok", port); done <- err }()
	time.Sleep(200 * time.Millisecond) // the request waits in serve
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled bridge request returned a connection")
	}
	time.Sleep(200 * time.Millisecond) // serve sees it gone
	got := make(chan net.Conn, 1)
	go func() {
		c, _ := bridgeCall(context.Background(), addr, "tok", port)
		got <- c
	}()
	cmd, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer cmd.Close()
	cmd.Write([]byte("y"))
	c := <-got
	if c == nil {
		t.Fatal("the second request got nothing")
	}
	defer c.Close()
	var one [1]byte
	if _, err := io.ReadFull(c, one[:]); err != nil || one[0] != 'y' {
		t.Fatalf("read %q, %v", one[:], err)
	}
}
