package podinit

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// BridgeEnv lists, comma-separated, the loopback ports "serve" listens on
// inside the Pod for bridges: a connection a command makes to
// 127.0.0.1:PORT is handed to the driver, which carries its bytes to a
// socket on the Bullpen side (the agent CLIs' route to MCP and the model
// gateway). The Pod's network policy is untouched: the bytes travel on
// the connection the driver opened to the init.
const BridgeEnv = "BULLPEN_BRIDGE_PORTS"

// Bounds of a bridge.
const (
	maxBridgeConns   = 64               // a bridge's connections open at once, waiting ones included
	maxBridgeWaiters = 16               // the driver's requests waiting for a connection
	bridgeHandoff    = 10 * time.Second // a connection no driver takes is closed after this
)

// bridge is one loopback listener of "serve" and its connections waiting
// for a driver to take them.
type bridge struct {
	port    int
	ln      net.Listener
	conns   chan net.Conn // unbuffered: handed to a waiting request
	open    atomic.Int32  // connections accepted and not yet closed
	waiters atomic.Int32
}

// listenBridges listens on 127.0.0.1 at each port in spec (BridgeEnv's
// value). A port that cannot be listened on is reported and skipped: the
// commands then see a refused connection there, never someone else's
// listener taken for the bridge (the init listens before any command
// runs).
func listenBridges(spec string, log io.Writer) map[int]*bridge {
	out := map[int]*bridge{}
	for _, f := range strings.Split(spec, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		port, err := strconv.Atoi(f)
		if err != nil || port < 1 || port > 65535 || port == Port {
			fmt.Fprintf(log, "bullpen-kube-init: bridge port %q: not a port\n", f)
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			fmt.Fprintf(log, "bullpen-kube-init: bridge port %d: %v\n", port, err)
			continue
		}
		b := &bridge{port: port, ln: ln, conns: make(chan net.Conn)}
		out[port] = b
		go b.accept()
	}
	return out
}

// accept takes the commands' connections one at a time and hands each
// to a waiting request, closing it when none takes it in time (no
// driver serves the bridge now) or when too many are open.
func (b *bridge) accept() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			time.Sleep(50 * time.Millisecond) // out of descriptors: let some close
			continue
		}
		if b.open.Add(1) > maxBridgeConns {
			b.done(c)
			continue
		}
		t := time.NewTimer(bridgeHandoff)
		select {
		case b.conns <- c:
		case <-t.C:
			b.done(c)
		}
		t.Stop()
	}
}

func (b *bridge) done(c net.Conn) {
	c.Close()
	b.open.Add(-1)
}

// serveBridge answers a "bridge PORT" request: it waits for a command's
// connection to the bridge (or for the client to go), answers
// frameAccepted, and from then on c carries that connection's bytes both
// ways, unframed, until either side closes.
func (s *server) serveBridge(c net.Conn, argv []string) {
	port, err := 0, error(nil)
	if len(argv) == 2 {
		port, err = strconv.Atoi(argv[1])
	}
	b := s.bridges[port]
	switch {
	case len(argv) != 2 || err != nil:
		s.refuse(c, "usage: bridge PORT")
		return
	case b == nil:
		s.refuse(c, "no bridge on port "+argv[1])
		return
	}
	if b.waiters.Add(1) > maxBridgeWaiters {
		b.waiters.Add(-1)
		s.refuse(c, "busy")
		return
	}
	gone := make(chan struct{})
	go func() { // the client sends nothing before frameAccepted: a read returns when it goes
		var one [1]byte
		_, _ = c.Read(one[:])
		close(gone)
	}()
	var in net.Conn
	select {
	case in = <-b.conns:
	case <-gone:
	}
	b.waiters.Add(-1)
	if in == nil {
		return
	}
	defer b.done(in)
	select {
	case <-gone: // went in the same instant: the command sees a closed connection
		return
	default:
	}
	if writeFrame(c, frameAccepted, nil) != nil {
		return
	}
	splice(in, c, gone)
}

// splice copies bytes both ways between the command's connection in and
// the client's c until both directions end or either side breaks. gone
// closes when the client's first read (or its close) returns: the
// client never writes before it received frameAccepted, so that read
// took nothing but EOF or the first byte, which is lost; the client
// therefore starts its stream with one padding byte (bridgePad).
func splice(in, c net.Conn, gone <-chan struct{}) {
	<-gone // the padding byte, or the client went
	Relay(in, c)
}

// Relay copies bytes both ways between a and b until both directions
// end (each end's write side is closed after its copy) or either breaks
// (both are closed).
func Relay(a, b net.Conn) {
	done := make(chan struct{})
	go func() { copyClose(a, b); close(done) }()
	copyClose(b, a)
	<-done
}

// copyClose copies src to dst, then closes dst's write side; a broken
// copy closes both.
func copyClose(dst, src net.Conn) {
	_, err := io.Copy(dst, src)
	if cw, ok := dst.(interface{ CloseWrite() error }); ok && err == nil {
		_ = cw.CloseWrite()
		return
	}
	dst.Close()
	src.Close()
}

// bridgePad is the byte a bridge client sends once accepted, before any
// data: the server's watch for the client's departure reads it.
const bridgePad = 0

// Bridge asks the init at the other end of conn, with token, for the
// next connection a command makes to its bridge on port: it blocks until
// one comes (or ctx ends) and returns conn, which then carries that
// connection's bytes both ways. A refused request returns an error
// wrapping ErrRefused. The caller closes the returned connection.
func Bridge(ctx context.Context, conn net.Conn, token string, port int) (net.Conn, error) {
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if _, err := conn.Write(EncodeRequest(token, []string{"bridge", strconv.Itoa(port)})); err != nil {
		conn.Close()
		return nil, fmt.Errorf("podinit: send the bridge request: %w", err)
	}
	typ, p, err := readFrame(conn, nil, maxData)
	switch {
	case err != nil:
		conn.Close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("podinit: no bridge connection: %w", err)
	case typ == frameRefused:
		conn.Close()
		return nil, fmt.Errorf("%w: %s", ErrRefused, p)
	case typ != frameAccepted:
		conn.Close()
		return nil, fmt.Errorf("podinit: an unexpected answer %q", typ)
	}
	if _, err := conn.Write([]byte{bridgePad}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("podinit: start the bridge: %w", err)
	}
	if !stop() {
		return nil, ctx.Err() // ctx ended in between: conn is closed
	}
	return conn, nil
}
