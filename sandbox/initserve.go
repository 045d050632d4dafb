package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// initServer is the part of init that runs commands for the host.
type initServer struct {
	uid, gid int

	mu      sync.Mutex
	waiters map[int]chan unix.WaitStatus // pid -> exit status

	spawn chan *spawnReq
}

type spawnReq struct {
	path  string
	argv  []string
	env   []string
	dir   string
	files []uintptr
	pid   int
	err   error
	done  chan struct{}
	state chan unix.WaitStatus
}

func newInitServer(uid, gid int) *initServer {
	return &initServer{uid: uid, gid: gid, waiters: map[int]chan unix.WaitStatus{},
		spawn: make(chan *spawnReq)}
}

// startSpawner starts the goroutine, locked to its own OS thread, from which
// every sandbox command is forked. That thread, and so every command, has
// no_new_privs, a landlock domain and the seccomp filter; init's other
// threads do not need them.
func (s *initServer) startSpawner() (tid int, err error) {
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		tid = unix.Gettid()
		if err := confineThread(); err != nil {
			ready <- err
			return
		}
		ready <- nil
		for r := range s.spawn {
			attr := &syscall.ProcAttr{Dir: r.dir, Env: r.env, Files: r.files,
				Sys: &syscall.SysProcAttr{Setsid: true,
					Credential: &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid), Groups: []uint32{}}}}
			s.mu.Lock()
			r.pid, r.err = syscall.ForkExec(r.path, r.argv, attr)
			if r.err == nil {
				s.waiters[r.pid] = r.state
			}
			s.mu.Unlock()
			close(r.done)
		}
	}()
	err = <-ready
	return tid, err
}

// reap collects every exited child (init is PID 1, so orphans too) and hands
// the statuses of commands to their waiters.
func (s *initServer) reap() {
	ch := make(chan os.Signal, 16)
	signal.Notify(ch, unix.SIGCHLD)
	for range ch {
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil || pid <= 0 {
				break
			}
			s.mu.Lock()
			if c, ok := s.waiters[pid]; ok {
				c <- ws
				delete(s.waiters, pid)
			}
			s.mu.Unlock()
		}
	}
}

func (s *initServer) serve(l *net.UnixListener) {
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go s.handle(c)
	}
}

func (s *initServer) handle(c *net.UnixConn) {
	defer c.Close()
	var req initRequest
	files, err := readFrame(c, &req)
	if err != nil {
		return
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	switch req.Op {
	case "ping":
		_ = writeFrame(c, initReply{Pid: os.Getpid()}, nil)
	case "exec":
		s.exec(c, &req, files)
	default:
		_ = writeFrame(c, initReply{Error: "unknown op " + req.Op}, nil)
	}
}

func (s *initServer) exec(c *net.UnixConn, req *initRequest, files []*os.File) {
	want := 2
	if req.Stdin {
		want = 3
	}
	if len(files) != want || len(req.Cmd) == 0 {
		_ = writeFrame(c, initReply{Error: "bad exec request"}, nil)
		return
	}
	stdio := make([]uintptr, 0, 3)
	if !req.Stdin {
		null, err := os.Open("/dev/null")
		if err != nil {
			_ = writeFrame(c, initReply{Error: "open /dev/null: " + err.Error()}, nil)
			return
		}
		defer null.Close()
		stdio = append(stdio, null.Fd())
	}
	for _, f := range files {
		stdio = append(stdio, f.Fd())
	}
	path, err := lookPath(req.Cmd[0], req.Env)
	if err != nil {
		_ = writeFrame(c, initReply{Error: err.Error(), NotFound: true}, nil)
		return
	}
	r := &spawnReq{path: path, argv: req.Cmd, env: req.Env, dir: req.Dir, files: stdio,
		done: make(chan struct{}), state: make(chan unix.WaitStatus, 1)}
	s.spawn <- r
	<-r.done
	for _, f := range files {
		f.Close()
	}
	if r.err != nil {
		_ = writeFrame(c, initReply{Error: fmt.Sprintf("exec %s: %v", req.Cmd[0], r.err),
			NotFound: errors.Is(r.err, unix.ENOENT) || errors.Is(r.err, unix.EACCES)}, nil)
		return
	}
	pid := r.pid
	// init runs with a lowered oom_score_adj; its commands must not.
	_ = os.WriteFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", []byte("0"), 0)
	if err := writeFrame(c, initReply{Pid: pid}, nil); err != nil {
		_ = unix.Kill(-pid, unix.SIGKILL)
	}
	var mu sync.Mutex
	timedOut := false
	kill := func(timeout bool) {
		mu.Lock()
		if timeout {
			timedOut = true
		}
		mu.Unlock()
		_ = unix.Kill(-pid, unix.SIGKILL)
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	if req.Timeout > 0 {
		t := time.AfterFunc(time.Duration(req.Timeout), func() { kill(true) })
		defer t.Stop()
	}
	exited := make(chan struct{})
	go func() {
		// Any frame (a kill request) or the host hanging up kills the command.
		var k initRequest
		fs, err := readFrame(c, &k)
		for _, f := range fs {
			f.Close()
		}
		select {
		case <-exited:
			return
		default:
		}
		if err != nil || k.Op == "kill" {
			kill(false)
		}
	}()
	ws := <-r.state
	close(exited)
	res := ExitResult{Code: ws.ExitStatus()}
	if ws.Signaled() {
		res.Code = 128 + int(ws.Signal())
		res.Signal = signalName(ws.Signal())
	}
	mu.Lock()
	res.TimedOut = timedOut
	mu.Unlock()
	_ = writeFrame(c, initReply{Exit: &res}, nil)
}

func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return "signal " + strconv.Itoa(int(sig))
}

// lookPath finds cmd in the PATH of env, inside the sandbox.
func lookPath(cmd string, env []string) (string, error) {
	if strings.Contains(cmd, "/") {
		if isExecutable(cmd) {
			return cmd, nil
		}
		return "", fmt.Errorf("exec %s: no such executable", cmd)
	}
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, cmd)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec %s: executable file not found in PATH", cmd)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
