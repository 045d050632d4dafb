package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"sort"
	"sync"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/fds"
	"golang.org/x/sys/unix"
)

// portProxy forwards connections from a host loopback port to 127.0.0.1:port
// inside a sandbox's network namespace.
type portProxy struct {
	port  int
	addr  string
	ln    net.Listener
	s     *sandbox
	mu    sync.Mutex
	conns map[net.Conn]bool
	done  bool
}

func sortedPorts(ps map[int]*portProxy) []*portProxy {
	out := make([]*portProxy, 0, len(ps))
	for _, p := range ps {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].port < out[j].port })
	return out
}

// PublishPort makes the sandbox's 127.0.0.1:port reachable at a host
// address 127.0.0.1:NNNN (ephemeral). Publishing a published port returns
// its existing address. Ports survive Stop/Start; after a Manager restart
// the same host port is reused when it is free.
func (m *Manager) PublishPort(ctx context.Context, id string, port int) (PortInfo, error) {
	if port < 1 || port > 65535 {
		return PortInfo{}, invalid("invalid port %d", port)
	}
	var pi PortInfo
	err := m.withSandbox(id, func(s *sandbox) error {
		if p, ok := s.ports[port]; ok {
			pi = PortInfo{Port: port, HostAddr: p.addr}
			return nil
		}
		if len(s.ports) >= maxPorts {
			return bullpen.Errorf(bullpen.ETOOLARGE, "too many published ports (max %d)", maxPorts)
		}
		var err error
		if pi, err = m.publishLocked(s, port, ""); err != nil {
			return err
		}
		return s.saveMeta()
	})
	return pi, err
}

// ListPorts returns the sandbox's published ports.
func (m *Manager) ListPorts(ctx context.Context, id string) ([]PortInfo, error) {
	var out []PortInfo
	err := m.withSandbox(id, func(s *sandbox) error {
		for _, p := range sortedPorts(s.ports) {
			out = append(out, PortInfo{Port: p.port, HostAddr: p.addr})
		}
		return nil
	})
	return out, err
}

// RevokePort stops publishing port and closes its open connections.
func (m *Manager) RevokePort(ctx context.Context, id string, port int) error {
	return m.withSandbox(id, func(s *sandbox) error {
		p, ok := s.ports[port]
		if !ok {
			return bullpen.Errorf(bullpen.ENOTFOUND, "port %d is not published", port)
		}
		p.close()
		delete(s.ports, port)
		s.syncPortMeta()
		return s.saveMeta()
	})
}

func (s *sandbox) syncPortMeta() {
	s.meta.Ports = s.meta.Ports[:0]
	for _, p := range sortedPorts(s.ports) {
		s.meta.Ports = append(s.meta.Ports, PortInfo{Port: p.port, HostAddr: p.addr})
	}
}

// publishLocked starts a proxy (caller holds s.mu). prefer is a host
// address to try first.
func (m *Manager) publishLocked(s *sandbox, port int, prefer string) (PortInfo, error) {
	var ln net.Listener
	if prefer != "" {
		ln, _ = net.Listen("tcp", prefer) // taken: any free port will do
	}
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return PortInfo{}, fmt.Errorf("sandbox: publish port: %w", err)
		}
	}
	p := &portProxy{port: port, addr: ln.Addr().String(), ln: ln, s: s, conns: map[net.Conn]bool{}}
	s.ports[port] = p
	s.syncPortMeta()
	go p.serve()
	return PortInfo{Port: port, HostAddr: p.addr}, nil
}

func (p *portProxy) close() {
	p.mu.Lock()
	p.done = true
	p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
}

func (p *portProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		c.Close()
		return false
	}
	p.conns[c] = true
	return true
}

func (p *portProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *portProxy) serve() {
	ln := fds.Listener(p.ln, nil) // waits out a shortage of descriptors
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *portProxy) forward(c net.Conn) {
	if !p.track(c) {
		return
	}
	defer p.untrack(c)
	p.s.mu.Lock()
	var nsfd int = -1
	if p.s.proc != nil && p.s.meta.State == StateRunning {
		// Dup so a concurrent Stop cannot close it under us.
		nsfd, _ = unix.FcntlInt(p.s.proc.netns.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	}
	p.s.mu.Unlock()
	if nsfd < 0 {
		return
	}
	up, err := dialInNetns(nsfd, p.port)
	unix.Close(nsfd)
	if err != nil {
		return
	}
	if !p.track(up) {
		return
	}
	defer p.untrack(up)
	relay(c, up)
}

// dialInNetns connects to 127.0.0.1:port in the network namespace nsfd.
// Only the socket is created inside the namespace, on a locked thread that
// switches back before it is unlocked.
func dialInNetns(nsfd, port int) (net.Conn, error) {
	fd, err := socketInNetns(nsfd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "sandbox-port")
	defer f.Close()
	sa := &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
	deadline := time.Now().Add(5 * time.Second)
	for {
		err = unix.Connect(fd, sa)
		if err != unix.EINTR || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: connect to port %d: %w", port, err)
	}
	return net.FileConn(f)
}

func socketInNetns(nsfd int) (int, error) {
	runtime.LockOSThread()
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return -1, err
	}
	defer unix.Close(orig)
	if err := unix.Setns(nsfd, unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return -1, fmt.Errorf("sandbox: setns: %w", err)
	}
	fd, serr := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
		// Leave the thread locked: it dies with this goroutine instead of
		// running other goroutines in the sandbox's namespace.
		if serr == nil {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("sandbox: setns back: %w", err)
	}
	runtime.UnlockOSThread()
	return fd, serr
}
