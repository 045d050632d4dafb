package sandbox

import (
	"context"
	"errors"
	"net"
	"sync"
)

// maxIdleConns bounds the idle control connections kept per sandbox: each
// holds a goroutine and an fd in init.
const maxIdleConns = 4

// initConns keeps a sandbox's idle control connections to its init, so a
// warm exec skips the dial, init's accept and the key exchange. A
// connection is kept only for the init it was dialled to (checked then:
// SO_PEERCRED pid and key) and only after init released it at the end of
// an exec; it is never shared between sandboxes (each sandbox has its
// own), nor used by two execs at once (it leaves the pool while in use).
type initConns struct {
	mu    sync.Mutex
	proc  *initProc // the init the connections belong to
	idle  []*net.UnixConn
	dials int  // fresh dials, for tests
	off   bool // keep nothing: every exec dials (tests and benchmarks compare)
}

// get returns an idle connection to proc's init, or nil if there is none.
func (ic *initConns) get(proc *initProc) *net.UnixConn {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.off || ic.proc != proc || exited(proc) {
		ic.dropLocked()
		return nil
	}
	if n := len(ic.idle); n > 0 {
		c := ic.idle[n-1]
		ic.idle = ic.idle[:n-1]
		return c
	}
	return nil
}

// put keeps c for the next exec on proc's init, or closes it. stop is the
// Manager's: once it closes, the connections are closed too (the init
// keeps running, for the next Manager to adopt).
func (ic *initConns) put(proc *initProc, c *net.UnixConn, stop <-chan struct{}) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.proc != proc {
		ic.dropLocked()
		ic.proc = proc
		// Once that init is gone its connections are dead: close them
		// then rather than hold the fds until the next exec.
		go func() {
			select {
			case <-proc.exited:
			case <-stop:
			}
			ic.mu.Lock()
			if ic.proc == proc {
				ic.dropLocked()
			}
			ic.mu.Unlock()
		}()
	}
	if ic.off || exited(proc) || closed(stop) || len(ic.idle) >= maxIdleConns {
		c.Close()
		return
	}
	ic.idle = append(ic.idle, c)
}

// dropLocked closes every idle connection (caller holds ic.mu).
func (ic *initConns) dropLocked() {
	for _, c := range ic.idle {
		c.Close()
	}
	ic.idle = nil
}

func exited(p *initProc) bool { return closed(p.exited) }

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// conn returns a connection to proc's init: an idle one, or a fresh dial
// (checked: peer pid and key). reused says which.
func (m *Manager) conn(ctx context.Context, s *sandbox, sock string, proc *initProc) (c *net.UnixConn, reused bool, err error) {
	if c := s.conns.get(proc); c != nil {
		return c, true, nil
	}
	s.conns.mu.Lock()
	s.conns.dials++
	s.conns.mu.Unlock()
	c, err = dialInit(ctx, sock, proc.pid, proc.key)
	return c, false, err
}

// errStale marks a failure on a reused connection before init answered:
// init did not read the request (it closed the connection, or died, and
// then a fresh dial fails too), so a retry on a fresh dial cannot run the
// command twice.
var errStale = errors.New("sandbox: stale control connection")

// Preconnect dials a running sandbox's init and keeps the checked
// connection for its next exec, so that the first command after a create
// skips the dial and the key exchange too. Best effort: a sandbox that is
// not running, or a pool already holding a connection, is left alone.
func (m *Manager) Preconnect(ctx context.Context, id string) error {
	s, err := m.lookup(id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	sock, proc := s.sock, s.proc
	running := s.meta.State == StateRunning && proc != nil
	s.mu.Unlock()
	if !running {
		return nil
	}
	s.conns.mu.Lock()
	have := s.conns.proc == proc && len(s.conns.idle) > 0
	s.conns.mu.Unlock()
	if have {
		return nil
	}
	c, _, err := m.conn(ctx, s, sock, proc)
	if err != nil {
		return err
	}
	s.conns.put(proc, c, m.stop)
	return nil
}
