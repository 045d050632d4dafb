package sbinit

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// sweepEvery is how often init reaps orphans (processes whose parent
	// died, re-parented to init) while it has any children. Its own
	// commands are reaped as soon as they exit (their pidfds wake it).
	sweepEvery = time.Second
	// trimAfter is how long init waits, once no exec is running, before it
	// returns its free heap to the kernel.
	trimAfter = time.Second
)

// server is the part of init that runs commands for the host. It needs no
// signal handling (os/signal would cost a thread): commands are watched
// through pidfds on the runtime's poller and orphans are swept with
// wait4(WNOHANG).
type server struct {
	uid, gid int
	// hostUID and hostGID are how the host's Manager appears here: the
	// overflow ids (see checkPeer).
	hostUID, hostGID uint32
	key              string // Config.Key
	spawn            chan *spawnReq
	trim             *time.Timer

	mu       sync.Mutex
	waiters  map[int]chan unix.WaitStatus // pid -> exit status
	children bool                         // init had children at the last sweep
	ticking  bool                         // a sweep is scheduled
	active   int                          // execs in flight
}

type spawnReq struct {
	path  string
	argv  []string
	env   []string
	dir   string
	files []uintptr
	pid   int
	pidfd int
	err   error
	done  chan struct{}
	state chan unix.WaitStatus
}

func newServer(uid, gid int) *server {
	s := &server{uid: uid, gid: gid, spawn: make(chan *spawnReq), waiters: map[int]chan unix.WaitStatus{},
		active: 1} // setup; run calls end when done
	s.trim = time.AfterFunc(time.Hour, s.trimIdle)
	s.trim.Stop()
	return s
}

// startSpawner starts the goroutine, locked to its own OS thread, from which
// every sandbox command is forked, and returns that thread's id and a
// function that confines it (call it once the host has moved the thread
// into the commands' cgroup). That thread, and so every command, gets its
// own cgroup namespace, no_new_privs, a landlock domain and the seccomp
// filter; init's other threads do not need them. As it is locked with
// runtime.LockOSThread, the runtime never clones new threads from it but
// from its template thread: they stay unconfined and out of the commands'
// pids cgroup, so a fork bomb at the pids limit cannot keep init from
// starting a thread.
func (s *server) startSpawner(filter []unix.SockFilter) (tid int, confine func() error) {
	tids := make(chan int, 1)
	next := make(chan struct{})
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		tids <- unix.Gettid()
		<-next
		if err := confineThread(filter); err != nil {
			ready <- err
			return
		}
		ready <- nil
		s.spawnLoop()
	}()
	return <-tids, func() error {
		close(next)
		return <-ready
	}
}

// spawnLoop forks the commands, on the calling (confined) thread.
func (s *server) spawnLoop() {
	cred := &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid), Groups: []uint32{}}
	for r := range s.spawn {
		r.pidfd = -1
		// Its own process group (kill(-pid) reaches what it forks), not
		// its own session: setsid makes the kernel create a scheduler
		// autogroup per command, about 75 µs of each fork here (A/B). The
		// session is init's, which has no controlling terminal, and a
		// command, not being a session leader, cannot acquire one.
		attr := &syscall.ProcAttr{Dir: r.dir, Env: r.env, Files: r.files,
			Sys: &syscall.SysProcAttr{Setpgid: true, Credential: cred, PidFD: &r.pidfd}}
		s.mu.Lock()
		// Belt and braces: whatever opened an fd without close-on-exec
		// since the last fork, it does not reach the command.
		cloexecAbove2()
		r.pid, r.err = syscall.ForkExec(r.path, r.argv, attr)
		if r.err == nil {
			s.waiters[r.pid] = r.state
			s.children = true
			s.armSweepLocked()
		}
		s.mu.Unlock()
		close(r.done)
	}
}

// sweep reaps every exited child (init is PID 1, so orphans too) and hands
// the statuses of commands to their waiters.
func (s *server) sweep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			s.children = err == nil // pid 0: children left, none exited
			break
		}
		if c, ok := s.waiters[pid]; ok {
			c <- ws
			delete(s.waiters, pid)
		}
	}
	s.armSweepLocked()
}

func (s *server) armSweepLocked() {
	if s.children && !s.ticking {
		s.ticking = true
		time.AfterFunc(sweepEvery, func() {
			s.mu.Lock()
			s.ticking = false
			s.mu.Unlock()
			s.sweep()
		})
	}
}

func (s *server) begin() {
	s.mu.Lock()
	s.active++
	s.trim.Stop()
	s.mu.Unlock()
}

func (s *server) end() {
	s.mu.Lock()
	s.active--
	if s.active == 0 {
		s.trim.Reset(trimAfter)
	}
	s.mu.Unlock()
}

// trimIdle returns free memory to the kernel once no exec runs: an idle
// sandbox should cost as little as possible.
func (s *server) trimIdle() {
	s.mu.Lock()
	idle := s.active == 0
	s.mu.Unlock()
	if idle {
		debug.FreeOSMemory()
	}
}

// serve accepts connections from the host until the listener breaks.
func (s *server) serve(ln *os.File) error {
	rc, err := ln.SyscallConn()
	if err != nil {
		return err
	}
	for {
		var nfd int
		var aerr error
		if err := rc.Read(func(fd uintptr) bool {
			nfd, _, aerr = unix.Accept4(int(fd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
			return aerr != unix.EAGAIN && aerr != unix.EINTR
		}); err != nil {
			return err
		}
		switch {
		case aerr == nil && s.checkPeer(nfd) != nil:
			unix.Close(nfd) // not the host: no answer at all
		case aerr == nil:
			go s.handle(os.NewFile(uintptr(nfd), "conn"))
		case aerr == unix.EBADF || aerr == unix.EINVAL || aerr == unix.ENOTSOCK:
			return wrap("accept", aerr)
		default: // EMFILE, ECONNABORTED, ...
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// handle serves one connection from the host: its hello, then requests
// one after another. A connection is kept for the next exec only when the
// host releases it after the exit reply (see OpRelease), so the host can
// skip a dial and the key exchange per command; the peer was checked at
// accept and a connected socket's peer cannot change.
func (s *server) handle(c *os.File) {
	defer c.Close()
	if writeFrame(c, Reply{Hello: s.key}) != nil {
		return
	}
	for {
		var req Request
		fds, err := readFrame(c, &req)
		if err != nil {
			return
		}
		switch req.Op {
		case "ping":
			closeFds(fds)
			_ = writeFrame(c, Reply{Pid: os.Getpid()})
		case "exec":
			if !s.exec(c, &req, fds) {
				return
			}
		default:
			closeFds(fds)
			_ = writeFrame(c, Reply{Error: "unknown op " + req.Op})
			return
		}
	}
}

// OpRelease is the host's frame after an exit reply that hands the
// connection back for another request; anything else (a kill that crossed
// the exit, a hang-up) ends the connection.
const OpRelease = "release"

// exec runs one command and reports whether the connection may serve
// another request.
func (s *server) exec(c *os.File, req *Request, fds []int) bool {
	defer func() { closeFds(fds) }()
	want := 2
	if req.Stdin {
		want = 3
	}
	if len(fds) != want || len(req.Cmd) == 0 {
		_ = writeFrame(c, Reply{Error: "bad exec request"})
		return false
	}
	stdio := make([]uintptr, 0, 3)
	if !req.Stdin {
		null, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			_ = writeFrame(c, Reply{Error: "open /dev/null: " + err.Error()})
			return false
		}
		defer unix.Close(null)
		stdio = append(stdio, uintptr(null))
	}
	for _, fd := range fds {
		stdio = append(stdio, uintptr(fd))
	}
	path, err := lookPath(req.Cmd[0], req.Env)
	if err != nil {
		_ = writeFrame(c, Reply{Error: err.Error(), NotFound: true})
		return false
	}
	s.begin()
	defer s.end()
	s.sweep() // zombies count against the pids limit: reap them first
	r := &spawnReq{path: path, argv: req.Cmd, env: req.Env, dir: req.Dir, files: stdio,
		done: make(chan struct{}), state: make(chan unix.WaitStatus, 1)}
	s.spawn <- r
	<-r.done
	// The command has its own copies; the host sees EOF when it exits.
	closeFds(fds)
	fds = nil
	if r.err != nil {
		_ = writeFrame(c, Reply{Error: "exec " + req.Cmd[0] + ": " + r.err.Error(),
			NotFound: errors.Is(r.err, unix.ENOENT) || errors.Is(r.err, unix.EACCES)})
		return false
	}
	return s.supervise(c, req, r)
}

// supervise reports the started command's pid, kills it on the host's
// kill frame, hang-up or timeout, and reports its exit; it returns whether
// the host released the connection afterwards.
func (s *server) supervise(c *os.File, req *Request, r *spawnReq) bool {
	pid := r.pid
	// init runs with a lowered oom_score_adj; its commands must not.
	if fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", unix.O_WRONLY|unix.O_CLOEXEC, 0); err == nil {
		_, _ = unix.Write(fd, []byte("0"))
		unix.Close(fd)
	}
	if err := writeFrame(c, Reply{Pid: pid}); err != nil {
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
	released := make(chan bool, 1)
	go func() {
		// Any frame (a kill request) or the host hanging up kills the
		// command while it runs; after the exit, only a release frame
		// keeps the connection.
		var k Request
		fs, err := readFrame(c, &k)
		closeFds(fs)
		select {
		case <-exited:
			released <- err == nil && k.Op == OpRelease
			return
		default:
		}
		if err != nil || k.Op == "kill" {
			kill(false)
		}
		released <- false
	}()
	ws := s.await(r)
	close(exited)
	res := Exit{Code: ws.ExitStatus()}
	if ws.Signaled() {
		res.Code = 128 + int(ws.Signal())
		res.Signal = signalName(ws.Signal())
	}
	mu.Lock()
	res.TimedOut = timedOut
	mu.Unlock()
	if writeFrame(c, Reply{Exit: &res}) != nil {
		return false
	}
	return <-released
}

// await waits for the command of r to exit and returns its status.
func (s *server) await(r *spawnReq) unix.WaitStatus {
	if err := waitPidfd(r.pidfd); err == nil {
		s.sweep()
		return <-r.state
	}
	// Cannot watch the pidfd: poll instead.
	for {
		s.sweep()
		select {
		case ws := <-r.state:
			return ws
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// waitPidfd waits, on the runtime's poller (no thread held), until the
// process of pidfd has exited; it closes pidfd.
func waitPidfd(pidfd int) error {
	exited := func(fd uintptr) bool {
		pf := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, _ := unix.Poll(pf, 0)
		return n > 0
	}
	if pidfd < 0 {
		return errors.New("no pidfd")
	}
	if err := unix.SetNonblock(pidfd, true); err != nil {
		unix.Close(pidfd)
		return err
	}
	f := os.NewFile(uintptr(pidfd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Read(exited)
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
		return "", errors.New("exec " + cmd + ": no such executable")
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
	return "", errors.New("exec " + cmd + ": executable file not found in PATH")
}

func isExecutable(p string) bool {
	var st unix.Stat_t
	return unix.Stat(p, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR && st.Mode&0o111 != 0
}
