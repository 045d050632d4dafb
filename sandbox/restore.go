package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

var idRe = regexp.MustCompile(`^sb_[0-9a-f]{16}$`)

// restore loads the sandboxes a previous process left in StateDir and
// re-adopts or reaps them (see Config.OnRestart). Half-created sandboxes
// and unreadable metadata are always reaped; so are mount points and
// sockets in RunDir that belong to no sandbox.
func (m *Manager) restore(ctx context.Context) error {
	entries, err := os.ReadDir(m.sbDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		id := e.Name()
		if !idRe.MatchString(id) {
			continue
		}
		s := &sandbox{id: id, dir: filepath.Join(m.sbDir, id), rootfs: filepath.Join(m.runDir, id),
			sock: filepath.Join(m.runDir, id+".sock"), ports: map[int]*portProxy{}, lastAct: m.now()}
		b, err := os.ReadFile(filepath.Join(s.dir, "meta.json"))
		if err == nil {
			err = json.Unmarshal(b, &s.meta)
		}
		if err == nil && s.meta.ID != id {
			err = os.ErrInvalid
		}
		if b, serr := os.ReadFile(filepath.Join(s.dir, "secrets.json")); serr == nil {
			_ = json.Unmarshal(b, &s.secrets)
		}
		if s.meta.IDMapBase == 0 {
			s.meta.IDMapBase = m.cfg.IDMapBase
		}
		if err != nil || s.meta.State == stateCreating || s.meta.State == StateTerminated || m.cfg.OnRestart == RestartReap {
			m.reap(s)
			continue
		}
		m.adopt(s)
		m.sbs[id] = s
	}
	// Stray mount points and sockets (no state directory).
	runEntries, _ := os.ReadDir(m.runDir)
	for _, e := range runEntries {
		id := strings.TrimSuffix(e.Name(), ".sock")
		if !idRe.MatchString(id) || m.sbs[id] != nil {
			continue
		}
		p := filepath.Join(m.runDir, e.Name())
		if e.IsDir() {
			_ = unmountAll(p)
		}
		os.Remove(p)
		if m.cg.exists(id) {
			_ = m.cg.remove(id)
		}
	}
	return nil
}

// adopt re-attaches to a sandbox whose init still runs, or marks it stopped.
func (m *Manager) adopt(s *sandbox) {
	md := &s.meta
	if md.NetIndex >= 0 {
		m.net.reserve(md.NetIndex)
	}
	alive := md.InitPid > 0 && md.InitStart != 0 && procStartTime(md.InitPid) == md.InitStart
	if alive {
		p := &initProc{pid: md.InitPid, start: md.InitStart, key: readInitKey(s), exited: make(chan struct{})}
		var err error
		if p.pidfd, err = openPidfd(p.pid); err == nil {
			if p.netns, err = os.Open("/proc/" + itoa(p.pid) + "/ns/net"); err != nil {
				p.pidfd.Close()
			}
		}
		if err == nil && (md.State == StatePaused || pingInit(s.sock, p.pid, p.key) == nil) {
			s.proc = p
			// A bridge port something inside took meanwhile stays
			// closed: the sandbox's own CLI then fails to connect.
			_ = m.startBridges(s, int(p.netns.Fd()))
			go m.watch(s, p)
		} else {
			if p.pidfd != nil {
				_ = unix.PidfdSendSignal(int(p.pidfd.Fd()), unix.SIGKILL, nil, 0)
				p.pidfd.Close()
			}
			alive = false
		}
	}
	if !alive {
		if md.State == StatePaused {
			_ = m.cg.freeze(s.id, false)
		}
		md.State = StateStopped
		md.InitPid, md.InitStart = 0, 0
		if md.NetIndex >= 0 {
			m.net.teardown(s.id)
		}
		os.Remove(s.sock)
	}
	_ = m.mountRootfs(s) // a stopped sandbox's files stay readable; Start retries
	old := md.Ports
	md.Ports = nil
	for _, pi := range old {
		_, _ = m.publishLocked(s, pi.Port, pi.HostAddr)
	}
	_ = s.saveMeta()
	m.emit(EventAdopted, s.id, string(md.State))
}

// reap removes a sandbox left by a previous process, whatever its state.
func (m *Manager) reap(s *sandbox) {
	md := &s.meta
	if md.InitPid > 0 && md.InitStart != 0 && procStartTime(md.InitPid) == md.InitStart {
		if fd, err := unix.PidfdOpen(md.InitPid, 0); err == nil {
			_ = m.cg.freeze(s.id, false)
			_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			pf := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			_, _ = unix.Poll(pf, 10000)
			unix.Close(fd)
			var ws unix.WaitStatus
			_, _ = unix.Wait4(md.InitPid, &ws, unix.WNOHANG, nil)
		}
	}
	if md.NetIndex >= 0 || m.net.exists(s.id) {
		m.net.teardown(s.id)
	}
	_ = m.cg.remove(s.id)
	_ = unmountAll(s.rootfs)
	os.Remove(s.rootfs)
	os.Remove(s.sock)
	_ = unmountAll(filepath.Join(s.dir, "disk"))
	os.RemoveAll(s.dir)
}

// pingInit checks that the init at sock (pid on the host) answers; the
// peer and key checks in dialInit make sure nothing else does.
func pingInit(sock string, pid int, key string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	uc, err := dialInit(ctx, sock, pid, key)
	if err != nil {
		return err
	}
	defer uc.Close()
	_ = uc.SetDeadline(time.Now().Add(5 * time.Second))
	if err := writeFrame(uc, initRequest{Op: "ping"}, nil); err != nil {
		return err
	}
	var r initReply
	_, err = readFrame(uc, &r)
	return err
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
}
