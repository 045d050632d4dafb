package sandboxes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// Output streams.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// Exec is a command running in a sandbox. Read Output until it is closed,
// then Wait; or Close to abandon the output (the command is killed).
type Exec struct {
	ID      string
	p       *sandbox.Process
	out     chan bullpen.SandboxChunk
	quit    chan struct{}
	quitMu  sync.Once
	pumped  chan struct{}
	done    chan struct{}
	res     bullpen.SandboxResult
	err     error
	started time.Time
	// kept holds the head and tail of stdout [0] and stderr [1] for the
	// exec history; each is written by its stream's pump only. It is nil in
	// a sandbox holding secrets: output could echo them, and stored events
	// must never carry a secret value.
	kept *[2]*headTail
	// pty: the command runs on a terminal; screen (when output is kept)
	// turns its stdout into the screen's text before kept[0].
	pty    bool
	screen *screenText
	// ended: its user closed it (End), so its death is a session's end.
	ended atomic.Bool
	svc   *Service
	sbID  string
}

// Output delivers the command's stdout and stderr chunks, each stream in
// order; it is closed when both streams have ended.
func (e *Exec) Output() <-chan bullpen.SandboxChunk { return e.out }

// Wait waits for the command to exit and its output to be delivered or
// abandoned. The error is non-nil if the sandbox went away first.
func (e *Exec) Wait() (bullpen.SandboxResult, error) {
	<-e.done
	return e.res, e.err
}

// ExecID returns the command's ID.
func (e *Exec) ExecID() string { return e.ID }

// Kill kills the command's process group.
func (e *Exec) Kill() error { return e.p.Kill() }

// Pid returns the command's pid inside the sandbox (its process group's
// too: a command leads its own).
func (e *Exec) Pid() int { return e.p.Pid() }

// Close stops delivering output and kills the command if it still runs.
func (e *Exec) Close() {
	e.quitMu.Do(func() { close(e.quit) })
	_ = e.p.Kill()
}

func newExecID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "x_" + hex.EncodeToString(b[:])
}

// Exec starts a command in a running sandbox as the sandbox user. Its
// start and end become stored events and its output goes out live (up to
// Config.LiveOutputLimit) to the owner's dashboards. Cancelling ctx kills
// the command.
func (s *Service) Exec(ctx context.Context, actor bullpen.Member, id string, req sandbox.ExecRequest) (bullpen.SandboxCommand, error) {
	e, err := s.start(ctx, actor, id, req)
	if err != nil {
		return nil, err // not a nil *Exec in a non-nil interface
	}
	return e, nil
}

// start is Exec with the concrete command, for the package's own callers.
func (s *Service) start(ctx context.Context, actor bullpen.Member, id string, req sandbox.ExecRequest) (*Exec, error) {
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return nil, err
	}
	p, err := s.m.Exec(ctx, in.ID, req)
	if err != nil {
		return nil, err
	}
	owner := bullpen.SandboxOwner(in.Tags)
	e := &Exec{ID: newExecID(), p: p, out: make(chan bullpen.SandboxChunk, 16), quit: make(chan struct{}),
		pumped: make(chan struct{}), done: make(chan struct{}), started: time.Now(), pty: req.PTY != nil, svc: s, sbID: in.ID}
	if len(in.SecretNames) == 0 {
		e.kept = &[2]*headTail{newHeadTail(historyStdoutHead, historyStdoutTail), newHeadTail(historyStderrHead, historyStderrTail)}
		if e.pty {
			e.screen = newScreenText(e.kept[0], req.PTY.Cols)
		}
	}
	base := bullpen.SandboxExecEvent{ID: in.ID, Name: bullpen.SandboxName(in.Name, in.Tags), OwnerID: owner, ExecID: e.ID,
		Command: commandLine(req.Cmd), ByID: actor.ID, PTY: e.pty}
	s.emit(bullpen.EventSandboxExecStarted, owner, base)
	live := &liveBudget{left: s.cfg.LiveOutputLimit}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.pump(e, Stdout, p.Stdout(), in.ID, owner, live) }()
	go func() { defer wg.Done(); s.pump(e, Stderr, p.Stderr(), in.ID, owner, live) }()
	go func() { wg.Wait(); close(e.out); close(e.pumped) }()
	go func() {
		res, werr := p.Wait()
		select { // output still held open by background processes is cut off
		case <-e.pumped:
		case <-time.After(time.Second):
			p.Close()
			<-e.pumped
		}
		p.Close()
		e.res = bullpen.SandboxResult{ExitCode: res.Code, Signal: res.Signal, TimedOut: res.TimedOut, Duration: time.Since(e.started)}
		e.err = werr
		fin := base
		code := res.Code
		fin.ExitCode, fin.Signal, fin.TimedOut, fin.DurationMS = &code, res.Signal, res.TimedOut, e.res.Duration.Milliseconds()
		fin.Ended = e.ended.Load() && !res.TimedOut // its user closed it while it ran
		if werr != nil {
			fin.ExitCode, fin.Error, fin.Ended = nil, bullpen.ErrorMessage(werr), false
		}
		e.keepOutput(&fin)
		s.emit(bullpen.EventSandboxExecFinished, owner, fin)
		close(e.done)
	}()
	return e, nil
}

// Bounds of the output kept with each command in the exec history: the
// start and the end of each stream, as for agents.
const (
	historyStdoutHead, historyStdoutTail = 2 << 10, 6 << 10
	historyStderrHead, historyStderrTail = 1 << 10, 3 << 10
)

// keep adds a chunk of stream to the output kept for the history.
func (e *Exec) keep(stream string, data []byte) {
	if e.kept == nil {
		return
	}
	switch {
	case stream == Stderr:
		_, _ = e.kept[1].Write(data)
	case e.screen != nil:
		_, _ = e.screen.Write(data)
	default:
		_, _ = e.kept[0].Write(data)
	}
}

// keepOutput puts the kept output into the finished event; it runs once
// both pumps are done.
func (e *Exec) keepOutput(p *bullpen.SandboxExecEvent) {
	if e.kept == nil {
		p.OutputWithheld = true
		return
	}
	if e.screen != nil {
		_ = e.screen.Close()
	}
	p.Stdout, p.StdoutBytes = e.kept[0].String(), e.kept[0].total
	p.Stderr, p.StderrBytes = e.kept[1].String(), e.kept[1].total
}

// liveBudget is what is left of one command's live output allowance.
type liveBudget struct {
	mu   sync.Mutex
	left int64
	cut  bool
}

// take reports how much of n bytes may go out live, and whether the cut
// notice is due now.
func (b *liveBudget) take(n int) (int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cut {
		return 0, false
	}
	if int64(n) <= b.left {
		b.left -= int64(n)
		return n, false
	}
	k := int(b.left)
	b.left, b.cut = 0, true
	return k, true
}

// pump reads one stream into chunks: to the caller and, within budget, live.
func (s *Service) pump(e *Exec, stream string, r io.Reader, sbID string, owner int64, live *liveBudget) {
	// The read buffer is reused across commands (what leaves the pump is
	// copied): two fresh 32 KiB buffers per command were most of what a
	// warm run allocated, and so of the server's GC work.
	bp, _ := s.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 32<<10)
		bp = &b
	}
	defer s.bufs.Put(bp)
	buf := *bp
	var off int64
	carry := 0 // bytes of an incomplete UTF-8 character kept for the next read
	for {
		n, err := r.Read(buf[carry:])
		n += carry
		end := n
		if err == nil {
			end = n - partialRune(buf[:n])
		}
		if end > 0 {
			data := append([]byte(nil), buf[:end]...)
			e.keep(stream, data)
			s.publishChunk(e.ID, sbID, owner, stream, off, data, live)
			select {
			case e.out <- bullpen.SandboxChunk{Stream: stream, Offset: off, Data: data}:
			case <-e.quit:
			}
			off += int64(end)
		}
		carry = copy(buf, buf[end:n])
		if err != nil {
			return
		}
	}
}

// partialRune returns the length of an incomplete UTF-8 sequence at the
// end of b (0 if none, or if b is not text anyway).
func partialRune(b []byte) int {
	for i := 1; i <= 3 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < 0x80 {
			return 0
		}
		if c >= 0xC0 { // a lead byte: is its sequence complete?
			need := 2
			if c >= 0xF0 {
				need = 4
			} else if c >= 0xE0 {
				need = 3
			}
			if need > i {
				return i
			}
			return 0
		}
	}
	return 0
}

func (s *Service) publishChunk(execID, sbID string, owner int64, stream string, off int64, data []byte, live *liveBudget) {
	k, cut := live.take(len(data))
	if k > 0 {
		p := bullpen.SandboxOutputEvent{ID: sbID, ExecID: execID, Stream: stream, Offset: off}
		setData(&p, data[:k])
		s.publishOutput(owner, p)
	}
	if cut {
		s.publishOutput(owner, bullpen.SandboxOutputEvent{ID: sbID, ExecID: execID, Stream: stream, Offset: off + int64(k), Truncated: true})
	}
}

func setData(p *bullpen.SandboxOutputEvent, b []byte) {
	if utf8.Valid(b) {
		p.Data = string(b)
	} else {
		p.DataB64 = b
	}
}

// capture keeps the first limit bytes of a stream and counts the rest.
type capture struct {
	buf   []byte
	limit int64
	total int64
}

func (c *capture) add(b []byte) {
	c.total += int64(len(b))
	if room := c.limit - int64(len(c.buf)); room > 0 {
		c.buf = append(c.buf, b[:min(int64(len(b)), room)]...)
	}
}

// trim drops a character cut in two by the limit, so captured text stays
// valid UTF-8.
func (c *capture) trim() {
	if c.total > int64(len(c.buf)) {
		c.buf = c.buf[:len(c.buf)-partialRune(c.buf)]
	}
}

// Run runs a command to completion and returns its output, each stream
// captured up to limit bytes (0: Config.RunOutputLimit; at most
// Config.MaxRunOutputLimit). The rest is read and dropped, so the command
// never blocks on a full pipe and the server never holds more than limit.
func (s *Service) Run(ctx context.Context, actor bullpen.Member, id string, req sandbox.ExecRequest, limit int64) (bullpen.SandboxRunResult, error) {
	if limit == 0 {
		limit = s.cfg.RunOutputLimit
	}
	if limit < 0 || limit > s.cfg.MaxRunOutputLimit {
		return bullpen.SandboxRunResult{}, bullpen.Errorf(bullpen.EINVALID, "output_limit must be between 1 and %d bytes (stream larger output with exec)", s.cfg.MaxRunOutputLimit)
	}
	e, err := s.start(ctx, actor, id, req)
	if err != nil {
		return bullpen.SandboxRunResult{}, err
	}
	out, errs := &capture{limit: limit}, &capture{limit: limit}
	for c := range e.Output() {
		if c.Stream == Stderr {
			errs.add(c.Data)
		} else {
			out.add(c.Data)
		}
	}
	out.trim()
	errs.trim()
	rr := bullpen.SandboxRunResult{Stdout: out.buf, Stderr: errs.buf, StdoutBytes: out.total, StderrBytes: errs.total,
		StdoutTruncated: out.total > limit, StderrTruncated: errs.total > limit}
	rr.Truncated = rr.StdoutTruncated || rr.StderrTruncated
	rr.SandboxResult, err = e.Wait()
	if err != nil {
		return rr, err
	}
	return rr, ctx.Err()
}
