package e2b

import (
	"sync"

	"github.com/bullpen-hq/bullpen"
)

// proc is a command started through process.Process: its output goes to
// every stream connected to it (Start's and Connect's), each in order and
// none lost; with none connected it is read and dropped, so the command
// never blocks on a full pipe. It outlives the streams, as in E2B.
type proc struct {
	sandboxID string
	pid       uint32
	tag       *string
	cfg       *processConfig
	pty       bool
	cmd       bullpen.SandboxCommand

	input    chan []byte // nil: started without stdin
	inMu     sync.Mutex  // orders sends against the close
	inClosed bool

	mu    sync.Mutex
	subs  map[*sub]struct{}
	ended bool
}

// sub is one stream's view of a proc's events.
type sub struct {
	ch   chan processEvent
	done chan struct{} // closed when the stream goes away
}

// registry holds the live procs of every sandbox.
type registry struct {
	mu    sync.Mutex
	procs map[string]map[uint32]*proc
}

func newRegistry() *registry { return &registry{procs: map[string]map[uint32]*proc{}} }

func (r *registry) add(p *proc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.procs[p.sandboxID]
	if m == nil {
		m = map[uint32]*proc{}
		r.procs[p.sandboxID] = m
	}
	m[p.pid] = p
}

func (r *registry) remove(p *proc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.procs[p.sandboxID]; m != nil && m[p.pid] == p {
		delete(m, p.pid)
		if len(m) == 0 {
			delete(r.procs, p.sandboxID)
		}
	}
}

// find returns the live proc of a sandbox a selector names.
func (r *registry) find(sandboxID string, sel *processSelector) (*proc, error) {
	if sel == nil || (sel.Pid == nil && sel.Tag == nil) {
		return nil, bullpen.Errorf(bullpen.EINVALID, "process selector (pid or tag) is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.procs[sandboxID] {
		if (sel.Pid != nil && p.pid == *sel.Pid) || (sel.Pid == nil && p.tag != nil && *p.tag == *sel.Tag) {
			return p, nil
		}
	}
	if sel.Pid != nil {
		return nil, bullpen.Errorf(bullpen.ENOTFOUND, "process with pid %d not found", *sel.Pid)
	}
	return nil, bullpen.Errorf(bullpen.ENOTFOUND, "process with tag %q not found", *sel.Tag)
}

// list returns a sandbox's live procs.
func (r *registry) list(sandboxID string) []*proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*proc, 0, len(r.procs[sandboxID]))
	for _, p := range r.procs[sandboxID] {
		out = append(out, p)
	}
	return out
}

// subscribe adds a stream; it is nil once the proc has ended.
func (p *proc) subscribe() *sub {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return nil
	}
	s := &sub{ch: make(chan processEvent, 64), done: make(chan struct{})}
	p.subs[s] = struct{}{}
	return s
}

func (p *proc) unsubscribe(s *sub) {
	p.mu.Lock()
	delete(p.subs, s)
	p.mu.Unlock()
}

// publish hands ev to every stream, waiting for each (so nothing is
// lost) unless it has gone away. The end event closes the streams.
func (p *proc) publish(ev processEvent) {
	p.mu.Lock()
	subs := make([]*sub, 0, len(p.subs))
	for s := range p.subs {
		subs = append(subs, s)
	}
	last := ev.End != nil
	if last {
		p.ended = true
		p.subs = nil
	}
	p.mu.Unlock()
	for _, s := range subs {
		select {
		case s.ch <- ev:
		case <-s.done:
		}
		if last {
			close(s.ch)
		}
	}
}

// send queues input for the command's stdin, in order.
func (p *proc) send(b []byte) error {
	if p.input == nil {
		return bullpen.Errorf(bullpen.ECONFLICT, "the process was started without stdin (start it with stdin: true)")
	}
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.inClosed {
		return bullpen.Errorf(bullpen.ECONFLICT, "the process's stdin is closed")
	}
	select {
	case p.input <- b:
		return nil
	default:
		return bullpen.Errorf(bullpen.ERATELIMIT, "the process is not reading its input fast enough")
	}
}

// closeStdin ends the command's input once what is queued is written.
func (p *proc) closeStdin() error {
	if p.input == nil {
		return bullpen.Errorf(bullpen.ECONFLICT, "the process was started without stdin")
	}
	if p.pty {
		return bullpen.Errorf(bullpen.EINVALID, "a PTY's input cannot be closed: send Ctrl-D (0x04) instead")
	}
	p.endInput()
	return nil
}

// endInput closes the input queue once.
func (p *proc) endInput() {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if !p.inClosed {
		p.inClosed = true
		close(p.input)
	}
}
