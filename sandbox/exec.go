package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"sort"
	"sync"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox/sbinit"
)

// Process is a command running in a sandbox.
type Process struct {
	stdout, stderr io.ReadCloser
	conn           *net.UnixConn
	kill           func() error // a driver's process (NewProcess); nil for the Manager's
	resize         func(rows, cols int) error
	pid            int
	tree           string // KillTree: the exec's cgroup dir
	treeTasks      string
	done           chan struct{}
	res            ExitResult
	err            error
	// mu orders Kill against the end of the command: a connection that
	// carried a kill frame is never handed back for another exec.
	mu     sync.Mutex
	killed bool // a kill frame was sent
	ended  bool // the exit status arrived; the connection is released
}

// Stdout returns the command's standard output, streamed while it runs.
// Read Stdout and Stderr concurrently (or the command blocks once a pipe
// buffer fills); each ends with io.EOF when every writer has exited.
func (p *Process) Stdout() io.Reader { return p.stdout }

// Stderr returns the command's standard error, streamed separately.
func (p *Process) Stderr() io.Reader { return p.stderr }

// Pid returns the command's pid inside the sandbox.
func (p *Process) Pid() int { return p.pid }

// Wait waits for the command to exit. It does not wait for output to be
// read. The error is non-nil only if the sandbox went away (stopped,
// terminated) before the command's exit status arrived.
func (p *Process) Wait() (ExitResult, error) {
	<-p.done
	return p.res, p.err
}

// ResizePTY resizes the terminal of a command its driver started with a
// PTY of its own (ProcessHooks.Resize). ok is false for a command whose
// terminal PTYResizeCommand resizes instead (the Manager's, under
// script(1)).
func (p *Process) ResizePTY(rows, cols int) (ok bool, err error) {
	if p.resize == nil {
		return false, nil
	}
	if err := checkPTYSize(rows, cols); err != nil {
		return true, err
	}
	return true, p.resize(rows, cols)
}

// Kill kills the command's process group.
func (p *Process) Kill() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.killed || p.ended {
		return nil
	}
	p.killed = true
	if p.kill != nil {
		return p.kill()
	}
	return writeFrame(p.conn, initRequest{Op: "kill"}, nil)
}

// release ends the exec on its connection: handed back to init and kept
// for the next exec if no kill frame crossed the exit, closed otherwise.
func (p *Process) release(m *Manager, s *sandbox, proc *initProc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ended = true
	if p.killed || writeFrame(p.conn, initRequest{Op: sbinit.OpRelease}, nil) != nil {
		p.conn.Close()
		return
	}
	s.conns.put(proc, p.conn, m.stop)
}

// Close releases the output pipes (and kills the command if it still runs).
func (p *Process) Close() error {
	_ = p.Kill()
	p.stdout.Close()
	p.stderr.Close()
	return nil
}

// sandboxEnv is the environment of a command: defaults, the image's, the
// spec's, secrets (as env) and the request's, later ones winning.
func (s *sandbox) env(extra map[string]string) []string {
	env := map[string]string{
		"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/go/bin",
		"HOME": "/home/sandbox", "USER": "sandbox", "LOGNAME": "sandbox", "SHELL": "/bin/sh",
		"LANG": "C.UTF-8", "TERM": "xterm", "HOSTNAME": s.hostname(),
	}
	for _, kv := range s.meta.ImageEnv {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				env[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	for k, v := range s.meta.Env {
		env[k] = v
	}
	for _, sec := range s.secrets {
		if sec.File == "" {
			env[sec.Name] = sec.Value
		}
	}
	for k, v := range extra {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Exec starts a command in a running sandbox as the sandbox user (uid 1000,
// no capabilities, no_new_privs, seccomp). Cancelling ctx kills it.
func (m *Manager) Exec(ctx context.Context, id string, req ExecRequest) (*Process, error) {
	if err := checkExec(&req); err != nil {
		return nil, err
	}
	s, err := m.lookup(id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.meta.State != StateRunning || s.proc == nil {
		defer s.mu.Unlock()
		if s.meta.State == StateTerminated || s.meta.State == stateCreating {
			return nil, bullpen.Errorf(bullpen.ENOTFOUND, "sandbox %q not found", id)
		}
		return nil, conflict(s, "exec in")
	}
	dir := req.Workdir
	if dir == "" {
		dir = s.meta.Workdir
	} else if !path.IsAbs(dir) {
		dir = path.Join(s.meta.Workdir, dir)
	}
	env := s.env(req.Env)
	sock, proc := s.sock, s.proc
	s.inflight++
	s.touch(m.now())
	s.mu.Unlock()
	p, err := m.startExec(ctx, s, sock, proc, &req, dir, env)
	if err != nil {
		m.execDone(s)
		return nil, err
	}
	m.emit(EventExecStarted, s.id, req.Cmd[0])
	go func() {
		var r initReply
		_, rerr := readFrame(p.conn, &r)
		switch {
		case rerr == nil && r.Exit != nil:
			p.res = *r.Exit
			p.release(m, s, proc)
		case rerr == nil:
			p.err = fmt.Errorf("sandbox: exec: %s", r.Error)
			p.conn.Close()
		default:
			p.err = bullpen.Errorf(bullpen.ECONFLICT, "sandbox %s stopped while the command ran", s.id)
			p.conn.Close()
		}
		if p.tree != "" {
			// Nothing the command started outlives it.
			if kerr := killTree(p.tree, p.treeTasks); kerr != nil && p.err == nil {
				p.err = kerr
			}
		}
		m.execDone(s)
		// Emitted before Wait returns, so that whoever waited on the
		// command sees its finished event before anything they do next
		// (a terminate's event, say).
		m.emit(EventExecFinished, s.id, fmt.Sprintf("%s exit=%d", req.Cmd[0], p.res.Code))
		close(p.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = p.Kill()
		case <-p.done:
		}
	}()
	return p, nil
}

func (m *Manager) execDone(s *sandbox) {
	s.mu.Lock()
	s.inflight--
	s.touch(m.now())
	s.mu.Unlock()
}

// execPipes are the host's ends and the command's ends of its stdio.
type execPipes struct {
	outR, outW, errR, errW, inR, inW *os.File
}

func newExecPipes(stdin bool) (*execPipes, error) {
	var p execPipes
	var err error
	if p.outR, p.outW, err = os.Pipe(); err == nil {
		if p.errR, p.errW, err = os.Pipe(); err == nil && stdin {
			p.inR, p.inW, err = os.Pipe()
		}
	}
	if err != nil {
		p.close(p.outR, p.outW, p.errR, p.errW)
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}
	return &p, nil
}

// theirs returns the fds that go to the command, stdin first if any.
func (p *execPipes) theirs() []int {
	if p.inR != nil {
		return []int{int(p.inR.Fd()), int(p.outW.Fd()), int(p.errW.Fd())}
	}
	return []int{int(p.outW.Fd()), int(p.errW.Fd())}
}

func (p *execPipes) close(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

func (m *Manager) startExec(ctx context.Context, s *sandbox, sock string, proc *initProc, req *ExecRequest, dir string, env []string) (*Process, error) {
	pp, err := newExecPipes(req.Stdin != nil)
	if err != nil {
		return nil, err
	}
	frame := initRequest{Op: "exec", Cmd: req.Cmd, Env: env, Dir: dir, Timeout: int64(req.Timeout), Stdin: req.Stdin != nil}
	conn, r, tree, err := m.sendExec(ctx, s, sock, proc, req.KillTree, frame, pp.theirs())
	if errors.Is(err, errStale) {
		conn, r, tree, err = m.sendExec(ctx, s, sock, proc, req.KillTree, frame, pp.theirs())
	}
	// The command has its own copies now (or never will).
	pp.close(pp.outW, pp.errW, pp.inR)
	if err == nil && r.Pid == 0 {
		conn.Close()
		if r.NotFound {
			err = bullpen.Errorf(bullpen.EINVALID, "%s", r.Error)
		} else {
			err = fmt.Errorf("sandbox: %s", r.Error)
		}
	}
	if err != nil {
		pp.close(pp.outR, pp.errR, pp.inW)
		return nil, err
	}
	p := &Process{stdout: pp.outR, stderr: pp.errR, conn: conn, pid: r.Pid, done: make(chan struct{}),
		tree: tree, treeTasks: m.cg.tasksFile()}
	if pp.inW != nil {
		go func() {
			_, _ = io.Copy(pp.inW, req.Stdin)
			pp.inW.Close()
		}()
	}
	return p, nil
}

// sendExec sends the exec request on a connection to init and reads the
// answer (the pid, or why not). Forks are serialized per sandbox (spawnMu)
// so that a KillTree exec's cgroup switch of init's spawner thread catches
// only its own command. errStale: a reused connection failed before init
// read the request; nothing ran, and a fresh dial may be tried.
func (m *Manager) sendExec(ctx context.Context, s *sandbox, sock string, proc *initProc, withTree bool, frame initRequest, fds []int) (*net.UnixConn, initReply, string, error) {
	var r initReply
	conn, reused, err := m.conn(ctx, s, sock, proc)
	if err != nil {
		return nil, r, "", bullpen.Errorf(bullpen.ECONFLICT, "sandbox is not reachable: %v", err)
	}
	s.spawnMu.Lock()
	tree, leave := "", func() {}
	if withTree {
		if tree, leave, err = m.cg.treeEnter(s.id, proc.pid); err != nil {
			s.spawnMu.Unlock()
			conn.Close()
			return nil, r, "", err
		}
	}
	err = writeFrame(conn, frame, fds)
	if err == nil {
		_, err = readFrame(conn, &r)
	}
	leave()
	s.spawnMu.Unlock()
	if err == nil && r.Pid != 0 {
		return conn, r, tree, nil
	}
	if tree != "" {
		_ = killTree(tree, m.cg.tasksFile())
	}
	if err != nil {
		conn.Close()
		if reused {
			return nil, r, "", errStale
		}
		// Only a dying init drops a fresh connection before it answers.
		return nil, r, "", bullpen.Errorf(bullpen.ECONFLICT, "sandbox is not reachable: %v", err)
	}
	return conn, r, "", nil
}

// Run runs a command to completion and returns its output. Each of stdout
// and stderr is captured up to Config.RunOutputLimit (default 16 MiB); the
// rest is read and discarded and Truncated is set. Output still held open
// by background processes is cut off one second after the command exits.
func (m *Manager) Run(ctx context.Context, id string, req ExecRequest) (RunResult, error) {
	start := time.Now()
	p, err := m.Exec(ctx, id, req)
	if err != nil {
		return RunResult{}, err
	}
	return Collect(ctx, p, m.cfg.RunOutputLimit, start)
}

// Collect waits for p, capturing up to limit bytes of each of its stdout
// and stderr, and closes it; Duration counts from start. Output still held
// open by background processes is cut off one second after the command
// exits. Drivers implement Run with it.
func Collect(ctx context.Context, p *Process, limit int64, start time.Time) (RunResult, error) {
	defer p.Close()
	var out, errb capBuffer
	out.limit, errb.limit = limit, limit
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, _ = io.Copy(&out, p.stdout) }()
	go func() { defer wg.Done(); _, _ = io.Copy(&errb, p.stderr) }()
	res, werr := p.Wait()
	copied := make(chan struct{})
	go func() { wg.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-time.After(time.Second):
		p.stdout.Close()
		p.stderr.Close()
		<-copied
	}
	rr := RunResult{Stdout: out.buf.Bytes(), Stderr: errb.buf.Bytes(), ExitCode: res.Code, Signal: res.Signal,
		TimedOut: res.TimedOut, Truncated: out.over || errb.over, Duration: time.Since(start)}
	if werr != nil {
		return rr, werr
	}
	if err := ctx.Err(); err != nil {
		return rr, err
	}
	return rr, nil
}

// ReadFrom reads r to its end, keeping the first limit bytes; io.Copy
// uses it instead of a fresh 32 KiB buffer per stream, and most commands
// write a line.
func (c *capBuffer) ReadFrom(r io.Reader) (int64, error) {
	n, err := c.buf.ReadFrom(io.LimitReader(r, max(c.limit-int64(c.buf.Len()), 0)))
	if err != nil {
		return n, err
	}
	rest, err := io.Copy(io.Discard, r)
	c.over = c.over || rest > 0
	return n + rest, err
}

// capBuffer keeps the first limit bytes written to it.
type capBuffer struct {
	buf   bytes.Buffer
	limit int64
	over  bool
}

// Write implements io.Writer.
func (c *capBuffer) Write(p []byte) (int, error) {
	room := c.limit - int64(c.buf.Len())
	if room <= 0 {
		c.over = c.over || len(p) > 0
		return len(p), nil
	}
	if int64(len(p)) > room {
		c.buf.Write(p[:room])
		c.over = true
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}
