package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox/sbinit"
	"golang.org/x/sys/unix"
)

// forkServer is the Manager's end of its fork-server (see package sbinit):
// a small process that clones and executes the inits, so that this
// process, whose clone would stall its own threads while the kernel copies
// its page tables, never forks one. Requests are serialized.
type forkServer struct {
	path string // the init binary (initBinary.execPath)
	// run runs a function in the sandboxes' mount namespace (mountNS.do),
	// where the fork-server is started: the inits it clones copy it.
	run  func(func() error) error
	mu   sync.Mutex
	sock int // our end of the socket; -1: not running
	cmd  *exec.Cmd
	// err is why the fork-server is off (it could not be started or died
	// twice in a row): the Manager then clones inits itself.
	err error
	on  atomic.Bool // err == nil, read without mu
}

// errForkServerOff wraps forkServer.err: the caller starts the init itself.
var errForkServerOff = errors.New("sandbox: fork-server off")

// forkServerTimeout bounds one request: a clone and an exec.
const forkServerTimeout = 10 * time.Second

// newForkServer starts the fork-server of the init binary at path, in
// the mount namespace run runs in; if it cannot, the result is off (see
// off) and starts nothing.
func newForkServer(path string, run func(func() error) error) *forkServer {
	fs := &forkServer{path: path, run: run, sock: -1}
	if err := fs.launch(); err != nil {
		fs.err = fmt.Errorf("%w: %w", errForkServerOff, err)
	}
	fs.on.Store(fs.err == nil)
	return fs
}

// launch starts a fork-server process (caller holds mu or owns fs).
func (fs *forkServer) launch() error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: fork-server socket: %w", err)
	}
	tv := unix.NsecToTimeval(forkServerTimeout.Nanoseconds())
	_ = unix.SetsockoptTimeval(fds[0], unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	_ = unix.SetsockoptTimeval(fds[0], unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	child := os.NewFile(uintptr(fds[1]), "forkserver")
	cmd := &exec.Cmd{
		Path:       fs.path,
		Args:       []string{InitBinaryName, "forkserver"},
		Env:        []string{sbinit.EnvForkServer + "=1", "GOMAXPROCS=1", "GODEBUG=madvdontneed=1,memprofilerate=0"},
		ExtraFiles: []*os.File{child}, // sbinit.ForkServerFd
	}
	err = fs.run(cmd.Start)
	child.Close()
	if err != nil {
		unix.Close(fds[0])
		return fmt.Errorf("sandbox: start fork-server: %w", err)
	}
	fs.sock, fs.cmd = fds[0], cmd
	return nil
}

// pid is the running fork-server's pid, 0 if none.
func (fs *forkServer) pid() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.cmd == nil {
		return 0
	}
	return fs.cmd.Process.Pid
}

// stopLocked closes our end and waits for the fork-server to exit (EOF
// makes it); caller holds mu.
func (fs *forkServer) stopLocked() {
	if fs.sock < 0 {
		return
	}
	unix.Close(fs.sock)
	fs.sock = -1
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = fs.cmd.Wait()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = fs.cmd.Process.Kill()
		<-done
	}
	fs.cmd = nil
}

// close stops the fork-server for good.
func (fs *forkServer) close() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.stopLocked()
	if fs.err == nil {
		fs.err = fmt.Errorf("%w: closed", errForkServerOff)
	}
	fs.on.Store(false)
}

// spawn has the fork-server start an init with args and env, ids mapped
// from base and f's child ends and log as its files. If the fork-server
// died it is restarted once; if that fails too it is off and spawn returns
// an error wrapping errForkServerOff (the caller starts the init itself).
func (fs *forkServer) spawn(args, env []string, base int, f *initFiles) (pid int, pidfd *os.File, err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.err != nil {
		return 0, nil, fs.err
	}
	req := sbinit.EncodeForkRequest(base, args, env)
	fds := []int{int(f.listen.Fd()), int(f.statusW.Fd()), int(f.goR.Fd()), int(f.log.Fd())}
	for try := 0; ; try++ {
		pid, pidfd, fail, err := fs.request(req, fds)
		if fail == forkOK {
			return pid, pidfd, err
		}
		fs.stopLocked()
		lerr := errors.New("died again")
		if try == 0 {
			lerr = fs.launch()
		}
		if lerr != nil {
			fs.err = fmt.Errorf("%w: %w (restart: %w)", errForkServerOff, err, lerr)
			fs.on.Store(false)
		}
		if fail == forkSent {
			// The request reached it: an init may have started with f's
			// files, so they must not start another (the caller's cleanup
			// closes GoFd's other end, which ends such an init).
			return 0, nil, err
		}
		if lerr != nil {
			return 0, nil, fs.err
		}
	}
}

// How a request failed.
const (
	forkOK     = iota // answered (an init started, or an error of its start)
	forkUnsent        // the fork-server was gone: it did not get the request
	forkSent          // it got the request and died or hung before answering
)

// request sends one request and reads its answer.
func (fs *forkServer) request(req []byte, fds []int) (pid int, pidfd *os.File, fail int, err error) {
	if err := unix.Sendmsg(fs.sock, req, unix.UnixRights(fds...), nil, unix.MSG_NOSIGNAL); err != nil {
		return 0, nil, forkUnsent, fmt.Errorf("sandbox: fork-server request: %w", err)
	}
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(fs.sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
	for errors.Is(err, unix.EINTR) {
		n, oobn, _, _, err = unix.Recvmsg(fs.sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
	}
	if err != nil || n == 0 {
		return 0, nil, forkSent, fmt.Errorf("sandbox: fork-server answer: %w", errors.Join(err, errors.New("no answer")))
	}
	got, _ := sbinit.ParseRights(oob[:oobn])
	ans := string(buf[:n])
	if msg, ok := strings.CutPrefix(ans, "error: "); ok {
		closeFds(got)
		return 0, nil, forkOK, fmt.Errorf("sandbox: start init: %s", msg)
	}
	pid, perr := strconv.Atoi(strings.TrimPrefix(ans, "ok "))
	if perr != nil || len(got) != 1 || !strings.HasPrefix(ans, "ok ") {
		closeFds(got)
		return 0, nil, forkSent, fmt.Errorf("sandbox: fork-server: bad answer %q", ans)
	}
	_ = unix.SetNonblock(got[0], true) // watch polls it on the netpoller
	return pid, os.NewFile(uintptr(got[0]), "pidfd"), forkOK, nil
}

func closeFds(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// spawnInit starts the init of cmd (from initCmdFor, ids mapped from
// base, f's files) through the fork-server, or, with the fork-server off,
// in this process. The caller closes f's child ends afterwards.
func (m *Manager) spawnInit(cmd *exec.Cmd, base int, f *initFiles, key string) (*initProc, error) {
	p := &initProc{key: key, exited: make(chan struct{})}
	if m.fs != nil {
		pid, pidfd, err := m.fs.spawn(cmd.Args, cmd.Env, base, f)
		if err == nil {
			p.pid, p.pidfd, p.forked = pid, pidfd, true
			return p, nil
		}
		if !errors.Is(err, errForkServerOff) {
			return nil, err
		}
		if m.pool != nil {
			m.pool.err.Store(&err) // reported by PoolError; not fatal
		}
	}
	// Cloned from a thread in the sandboxes' mount namespace, as the
	// fork-server's inits are.
	if err := m.mnt.do(cmd.Start); err != nil {
		return nil, fmt.Errorf("sandbox: start init: %w", err)
	}
	p.pid, p.cmd = cmd.Process.Pid, cmd
	return p, nil
}

// forkServerOn reports whether inits start through the fork-server.
func (m *Manager) forkServerOn() bool { return m.fs != nil && m.fs.on.Load() }

// ForkServerError reports why the Manager starts inits itself instead of
// through its fork-server (nil while the fork-server works).
func (m *Manager) ForkServerError() error {
	if m.fs == nil {
		return nil
	}
	m.fs.mu.Lock()
	defer m.fs.mu.Unlock()
	return m.fs.err
}

// kill kills the init and waits (up to a few seconds) for it to exit.
func (p *initProc) kill() {
	if p.cmd != nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		return
	}
	if p.pidfd == nil {
		return
	}
	fd := int(p.pidfd.Fd())
	if fd < 0 { // closed already
		return
	}
	_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	pf := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	_, _ = unix.Poll(pf, 5000)
}
