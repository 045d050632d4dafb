package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"sort"
	"sync"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
)

// Process is a command running in a sandbox.
type Process struct {
	stdout, stderr *os.File
	conn           *net.UnixConn
	pid            int
	tree           string // KillTree: the exec's cgroup dir
	treeTasks      string
	done           chan struct{}
	res            ExitResult
	err            error
	killOnce       sync.Once
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

// Kill kills the command's process group.
func (p *Process) Kill() error {
	var err error
	p.killOnce.Do(func() {
		select {
		case <-p.done:
			return
		default:
		}
		err = writeFrame(p.conn, initRequest{Op: "kill"}, nil)
	})
	return err
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
		case rerr == nil:
			p.err = fmt.Errorf("sandbox: exec: %s", r.Error)
		default:
			p.err = bullpen.Errorf(bullpen.ECONFLICT, "sandbox %s stopped while the command ran", s.id)
		}
		p.conn.Close()
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

func (m *Manager) startExec(ctx context.Context, s *sandbox, sock string, proc *initProc, req *ExecRequest, dir string, env []string) (*Process, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}
	var inR, inW *os.File
	fds := []int{int(outW.Fd()), int(errW.Fd())}
	if req.Stdin != nil {
		if inR, inW, err = os.Pipe(); err != nil {
			outR.Close()
			outW.Close()
			errR.Close()
			errW.Close()
			return nil, fmt.Errorf("sandbox: pipe: %w", err)
		}
		fds = append([]int{int(inR.Fd())}, fds...)
	}
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
	conn, err := dialInit(ctx, sock, proc.pid, proc.key)
	if err != nil {
		closeAll(outR, outW, errR, errW, inR, inW)
		return nil, bullpen.Errorf(bullpen.ECONFLICT, "sandbox is not reachable: %v", err)
	}
	s.spawnMu.Lock()
	tree, leave := "", func() {}
	if req.KillTree {
		if tree, leave, err = m.cg.treeEnter(s.id, proc.pid); err != nil {
			s.spawnMu.Unlock()
			conn.Close()
			closeAll(outR, outW, errR, errW, inR, inW)
			return nil, err
		}
	}
	err = writeFrame(conn, initRequest{Op: "exec", Cmd: req.Cmd, Env: env, Dir: dir,
		Timeout: int64(req.Timeout), Stdin: req.Stdin != nil}, fds)
	closeAll(outW, errW, inR)
	var r initReply
	if err == nil {
		_, err = readFrame(conn, &r)
	}
	leave()
	s.spawnMu.Unlock()
	if err != nil || r.Pid == 0 {
		if tree != "" {
			_ = killTree(tree, m.cg.tasksFile())
		}
		conn.Close()
		closeAll(outR, errR, inW)
		if err != nil {
			return nil, fmt.Errorf("sandbox: exec: %w", err)
		}
		if r.NotFound {
			return nil, bullpen.Errorf(bullpen.EINVALID, "%s", r.Error)
		}
		return nil, fmt.Errorf("sandbox: %s", r.Error)
	}
	p := &Process{stdout: outR, stderr: errR, conn: conn, pid: r.Pid, done: make(chan struct{}),
		tree: tree, treeTasks: m.cg.tasksFile()}
	if inW != nil {
		go func() {
			_, _ = io.Copy(inW, req.Stdin)
			inW.Close()
		}()
	}
	return p, nil
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
	defer p.Close()
	var out, errb capBuffer
	out.limit, errb.limit = m.cfg.RunOutputLimit, m.cfg.RunOutputLimit
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
