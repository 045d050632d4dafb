package sandbox

import (
	"fmt"
	"net"
	"os"
	"sync"

	"github.com/bullpen-hq/bullpen/internal/fds"
	"golang.org/x/sys/unix"
)

// bridgeProxy is a listener on 127.0.0.1:Port inside a sandbox's network
// namespace, held by the Manager, that forwards each connection to a host
// unix socket. The sandbox never sees the socket file or any other host
// address: with network "none" this is its only way out.
type bridgeProxy struct {
	Bridge
	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]bool
	done  bool
}

// maxBridgeConns bounds a bridge's connections open at once; the host
// socket behind it bounds them again, per agent.
const maxBridgeConns = 64

// startBridges opens the sandbox's bridges in the network namespace nsfd
// (caller holds s.mu). A port already taken inside fails the start.
func (m *Manager) startBridges(s *sandbox, nsfd int) error {
	for _, b := range s.meta.Bridges {
		ln, err := listenInNetns(nsfd, b.Port)
		if err != nil {
			m.closeBridges(s)
			return err
		}
		bp := &bridgeProxy{Bridge: b, ln: ln, conns: map[net.Conn]bool{}}
		s.bridges = append(s.bridges, bp)
		go bp.serve()
	}
	return nil
}

// closeBridges closes the sandbox's bridge listeners and their connections
// (caller holds s.mu).
func (m *Manager) closeBridges(s *sandbox) {
	for _, b := range s.bridges {
		b.close()
	}
	s.bridges = nil
}

// listenInNetns listens on 127.0.0.1:port in the network namespace nsfd.
func listenInNetns(nsfd, port int) (net.Listener, error) {
	fd, err := socketInNetns(nsfd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "sandbox-bridge")
	defer f.Close()
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return nil, fmt.Errorf("sandbox: bridge port %d: %w", port, err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return nil, fmt.Errorf("sandbox: bridge port %d: listen: %w", port, err)
	}
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("sandbox: bridge port %d: %w", port, err)
	}
	return ln, nil
}

// serve accepts the sandbox's connections until the bridge closes,
// waiting out a shortage of descriptors. One past maxBridgeConns open is
// closed at once: a flood from inside holds a bounded number of the
// host's descriptors (two per connection here, one at the host socket).
func (b *bridgeProxy) serve() {
	ln := fds.Listener(b.ln, nil)
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go b.forward(c)
	}
}

func (b *bridgeProxy) forward(c net.Conn) {
	if !b.track(c) {
		return
	}
	defer b.untrack(c)
	up, err := net.Dial("unix", b.HostSocket)
	if err != nil {
		return // the sandbox sees a closed connection
	}
	if !b.track(up) {
		return
	}
	defer b.untrack(up)
	relay(c, up)
}

func (b *bridgeProxy) track(c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done || len(b.conns) >= 2*maxBridgeConns {
		c.Close()
		return false
	}
	b.conns[c] = true
	return true
}

func (b *bridgeProxy) untrack(c net.Conn) {
	b.mu.Lock()
	delete(b.conns, c)
	b.mu.Unlock()
	c.Close()
}

func (b *bridgeProxy) close() {
	b.mu.Lock()
	b.done = true
	b.ln.Close()
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
}
