package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox/sbinit"
	"golang.org/x/sys/unix"
)

// initProc is a running sandbox init as seen from the host.
type initProc struct {
	pid      int
	start    uint64
	cmd      *exec.Cmd // nil when adopted from a previous process or forked
	forked   bool      // started by the fork-server: not this process's child
	pidfd    *os.File
	netns    *os.File
	key      string // sbinit.Config.Key, also in the sandbox's initKeyFile
	exited   chan struct{}
	released atomic.Bool
}

// release drops the host's handles without touching the process (Close).
func (p *initProc) release() {
	p.released.Store(true)
	p.pidfd.Close()
	p.netns.Close()
}

const initReadyTimeout = 30 * time.Second

// startLocked starts the sandbox's init (caller holds s.mu): cgroups
// (unless the caller made them), the init binary in new namespaces,
// network, and a wait for init to report ready.
func (m *Manager) startLocked(ctx context.Context, s *sandbox, cgroupsMade bool) error {
	md := &s.meta
	if !cgroupsMade {
		if err := m.cg.create(s.id, md.CPU, md.MemoryBytes, md.Pids); err != nil {
			return err
		}
	}
	f, err := openInitFiles(s.sock, filepath.Join(s.dir, "init.log"))
	if err != nil {
		return err
	}
	defer f.close()
	key, err := newInitKey(s)
	if err != nil {
		return err
	}
	cmd, err := m.initCmd(s, f, key)
	if err != nil {
		return err
	}
	p, err := m.spawnInit(cmd, int(s.meta.IDMapBase), f, key)
	f.closeChildEnds()
	if err != nil {
		return err
	}
	return m.attachInit(s, p, func() error { return m.initHandshake(ctx, s, p.pid, f) })
}

// attachInit runs handshake (which lets the started init p build the
// sandbox and waits for its "ok"), then attaches the host's side: pidfd,
// network, bridges, metadata and the exit watch. On error it kills p.
func (m *Manager) attachInit(s *sandbox, p *initProc, handshake func() error) (err error) {
	md := &s.meta
	defer func() {
		if err != nil {
			p.kill()
			if p.pidfd != nil {
				p.pidfd.Close()
			}
			if p.netns != nil {
				p.netns.Close()
			}
			if md.NetIndex >= 0 {
				m.net.teardown(s.id)
			}
		}
	}()
	if err := handshake(); err != nil {
		return err
	}
	if p.pidfd == nil {
		if p.pidfd, err = openPidfd(p.pid); err != nil {
			return err
		}
	}
	if p.netns, err = os.Open("/proc/" + strconv.Itoa(p.pid) + "/ns/net"); err != nil {
		return fmt.Errorf("sandbox: open netns: %w", err)
	}
	if len(md.Allowed) > 0 {
		if md.NetIndex < 0 {
			if md.NetIndex, err = m.net.alloc(); err != nil {
				return err
			}
		} else {
			m.net.reserve(md.NetIndex)
		}
		if err := m.net.setup(s.id, md.NetIndex, int(p.netns.Fd()), parseCIDRs(md.Allowed)); err != nil {
			return err
		}
	}
	if err := m.startBridges(s, int(p.netns.Fd())); err != nil {
		return err
	}
	p.start = procStartTime(p.pid)
	md.InitPid, md.InitStart = p.pid, p.start
	md.StartedAt = m.now()
	s.proc = p
	s.lastAct = md.StartedAt
	go m.watch(s, p)
	return nil
}

// initFiles are the files a starting init gets (the child ends, which
// the host closes once init runs) and the host's ends of its pipes.
type initFiles struct {
	listen, statusW, goR *os.File // sbinit.ListenFd, StatusFd, GoFd
	statusR, goW, log    *os.File
}

// openInitFiles binds the control socket at sock and opens the pipes and
// the log (logPath) of an init about to start.
func openInitFiles(sock, logPath string) (_ *initFiles, err error) {
	f := &initFiles{}
	defer func() {
		if err != nil {
			f.closeChildEnds()
			f.close()
		}
	}()
	if f.listen, err = bindControl(sock); err != nil {
		return nil, err
	}
	if f.statusR, f.statusW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("sandbox: status pipe: %w", err)
	}
	if f.goR, f.goW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("sandbox: go pipe: %w", err)
	}
	f.log, err = os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sandbox: init log: %w", err)
	}
	return f, nil
}

func (f *initFiles) closeChildEnds() {
	for _, x := range []*os.File{f.listen, f.statusW, f.goR} {
		if x != nil {
			x.Close()
		}
	}
}

func (f *initFiles) close() {
	for _, x := range []*os.File{f.statusR, f.goW, f.log} {
		if x != nil {
			x.Close()
		}
	}
}

// initCmd is the command that starts the sandbox's init in its new
// namespaces.
func (m *Manager) initCmd(s *sandbox, f *initFiles, key string) (*exec.Cmd, error) {
	cfg := initConfig{Rootfs: s.rootfs, Hostname: s.hostname(), Key: key}
	if s.meta.HostBase {
		cfg.Binds = m.binds
	}
	return m.initCmdFor(s.id, cfg, int(s.meta.IDMapBase), f)
}

// initCmdFor is the command that starts an init for sandbox id with cfg
// (Version, UID, GID and Seccomp filled in here), mapping the sandbox's
// ids to host ids from base.
func (m *Manager) initCmdFor(id string, cfg initConfig, base int, f *initFiles) (*exec.Cmd, error) {
	filter, err := seccompFilter()
	if err != nil {
		return nil, err
	}
	cfg.Version, cfg.UID, cfg.GID, cfg.Seccomp = sbinit.Version, sandboxUID, sandboxUID, filter
	raw, _ := json.Marshal(cfg)
	return &exec.Cmd{
		Path: m.init.execPath(),
		Args: []string{InitBinaryName, id},
		// One P, a small heap target, freed memory returned at once and no
		// heap profiling: init is idle most of its life.
		Env:        []string{initEnv + "=" + string(raw), "GOMAXPROCS=1", "GOGC=50", "GODEBUG=madvdontneed=1,memprofilerate=0"},
		Stdout:     f.log,
		Stderr:     f.log,
		ExtraFiles: []*os.File{f.listen, f.statusW, f.goR}, // sbinit.ListenFd, StatusFd, GoFd
		// Exactly what the fork-server starts inits with.
		SysProcAttr: sbinit.InitSysProcAttr(base),
	}, nil
}

// initHandshake puts a started init (host pid) into the sandbox's cgroups,
// its spawner thread into the commands' one, lets it go on and waits for
// it to report ready.
func (m *Manager) initHandshake(ctx context.Context, s *sandbox, pid int, f *initFiles) error {
	st := newInitStatus(ctx, f.statusR, filepath.Join(s.dir, "init.log"))
	defer st.close()
	if err := m.enterCgroups(s.id, pid, s.meta.NoFile, st); err != nil {
		return err
	}
	if _, err := f.goW.Write([]byte("g")); err != nil {
		return fmt.Errorf("sandbox: init go-ahead: %w", err)
	}
	return st.ready()
}

// enterCgroups moves a started init (host pid) into the cgroups of id and
// its spawner thread, once init reports it on st, into the commands' one.
// It sets init's open files limit unless nofile is negative.
func (m *Manager) enterCgroups(id string, pid int, nofile int64, st *initStatus) error {
	if err := m.cg.add(id, pid); err != nil {
		return err
	}
	if nofile >= 0 {
		if err := m.setNoFile(pid, nofile); err != nil {
			return err
		}
	}
	// init itself should be the last thing the OOM killer picks; it resets
	// the score of each command it starts.
	_ = os.WriteFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", []byte("-900"), 0)
	nsTid, err := st.spawnerTid()
	if err != nil {
		return err
	}
	tid, err := hostTid(pid, nsTid)
	if err != nil {
		return err
	}
	return m.cg.addThread(id, tid)
}

// hostTid maps a thread id inside init's pid namespace to the host's.
func hostTid(pid, nsTid int) (int, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("sandbox: init threads: %w", err)
	}
	want := strconv.Itoa(nsTid)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
				f := strings.Fields(v)
				if len(f) == 2 && f[1] == want {
					return strconv.Atoi(f[0])
				}
			}
		}
	}
	return 0, fmt.Errorf("sandbox: init spawner thread %d not found", nsTid)
}

func openPidfd(pid int) (*os.File, error) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("sandbox: pidfd_open: %w", err)
	}
	return os.NewFile(uintptr(fd), "pidfd"), nil
}

// procStartTime returns field 22 of /proc/pid/stat, 0 if pid is gone.
func procStartTime(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}

func parseCIDRs(cs []string) []*net.IPNet {
	var out []*net.IPNet
	for _, c := range cs {
		if _, n, err := parseAllow(c); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// watch waits (on the netpoller, no thread held) for init to exit; an exit
// nobody asked for is a crash: the sandbox becomes stopped.
func (m *Manager) watch(s *sandbox, p *initProc) {
	if rc, err := p.pidfd.SyscallConn(); err == nil {
		_ = rc.Read(func(fd uintptr) bool {
			pf := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, _ := unix.Poll(pf, 0)
			return n > 0
		})
	}
	if p.released.Load() {
		return
	}
	if p.cmd != nil {
		_ = p.cmd.Wait()
	} else if !p.forked {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(p.pid, &ws, unix.WNOHANG, nil) // reap if it is our child
	}
	close(p.exited)
	s.mu.Lock()
	crashed := s.proc == p
	if crashed {
		s.proc = nil
		m.cleanupInit(s, p)
		s.meta.State = StateStopped
		s.meta.InitPid, s.meta.InitStart = 0, 0
		_ = s.saveMeta()
	}
	s.mu.Unlock()
	if crashed {
		m.emit(EventCrashed, s.id, "init exited")
		m.emit(EventStopped, s.id, "")
	}
}

// stopLocked kills the sandbox's init (and with it every process of the
// sandbox) and waits for it (caller holds s.mu).
func (m *Manager) stopLocked(s *sandbox) error {
	p := s.proc
	if p == nil {
		return nil
	}
	s.proc = nil
	if s.meta.State == StatePaused {
		_ = m.cg.freeze(s.id, false) // frozen tasks cannot die
	}
	if err := unix.PidfdSendSignal(int(p.pidfd.Fd()), unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("sandbox: kill init: %w", err)
	}
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		return errors.New("sandbox: init did not exit")
	}
	m.cleanupInit(s, p)
	s.meta.InitPid, s.meta.InitStart = 0, 0
	return nil
}

// cleanupInit releases what belonged to a dead init.
func (m *Manager) cleanupInit(s *sandbox, p *initProc) {
	m.closeBridges(s)
	p.pidfd.Close()
	p.netns.Close()
	if s.meta.NetIndex >= 0 {
		m.net.teardown(s.id)
	}
	os.Remove(s.sock)
}

// unmountSandbox unmounts the sandbox's Spec.Mounts binds, overlay and
// disk and removes its mount point (in the mount namespace).
func (m *Manager) unmountSandbox(s *sandbox) error {
	var errs []error
	for _, mt := range s.meta.Mounts {
		if err := unmountAll(filepath.Join(s.rootfs, path.Clean(mt.Path))); err != nil {
			errs = append(errs, err)
		}
	}
	if err := unmountAll(s.rootfs); err != nil {
		errs = append(errs, err)
	} else if err := os.Remove(s.rootfs); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("sandbox: remove mount point: %w", err))
	}
	if err := unmountAll(filepath.Join(s.dir, "disk")); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// destroyLocked removes everything of the sandbox (caller holds s.mu).
func (m *Manager) destroyLocked(s *sandbox) error {
	var errs []error
	if err := m.stopLocked(s); err != nil {
		errs = append(errs, err)
	}
	for _, p := range s.ports {
		p.close()
	}
	s.ports = map[int]*portProxy{}
	if err := m.cg.remove(s.id); err != nil {
		errs = append(errs, err)
	}
	if s.meta.NetIndex >= 0 {
		m.net.teardown(s.id)
		m.net.release(s.meta.NetIndex)
	}
	if err := m.mnt.do(func() error { return m.unmountSandbox(s) }); err != nil {
		errs = append(errs, err)
	}
	os.Remove(s.sock)
	if len(errs) == 0 {
		if err := os.RemoveAll(s.dir); err != nil {
			errs = append(errs, fmt.Errorf("sandbox: remove state: %w", err))
		}
	}
	s.meta.State = StateTerminated
	return errors.Join(errs...)
}
