package sbinit

import (
	"errors"
	"math"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Only stdio may cross into a command. Init makes that true by
// construction: at start it closes every fd it inherited but does not need
// (a server started with stray fds passes them to every child it execs)
// and marks the rest close-on-exec; every fd it opens later is
// close-on-exec; and right before each fork it marks every fd above 2
// close-on-exec again, so that even an fd some library opened carelessly
// cannot reach a command.

// sealFds closes the inherited fds init does not use (all but stdio and
// the ones the host passed) and marks every fd above 2 close-on-exec.
// Go opens its own fds close-on-exec, so an fd without the flag at this
// point was inherited.
func sealFds() {
	if d, err := os.Open("/proc/self/fd"); err == nil {
		names, _ := d.Readdirnames(-1)
		self := int(d.Fd())
		for _, n := range names {
			fd, err := strconv.Atoi(n)
			if err != nil || fd <= 2 || fd == self {
				continue
			}
			if fd == ListenFd || fd == StatusFd || fd == GoFd {
				_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
				continue
			}
			if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && fl&unix.FD_CLOEXEC == 0 {
				unix.Close(fd)
			}
		}
		d.Close()
	}
	cloexecAbove2()
}

// cloexecAbove2 marks every fd above 2 close-on-exec (kernel ≥ 5.11; on
// older kernels sealFds' per-fd marking has to do).
func cloexecAbove2() {
	_ = unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
}

// The control channel is authenticated by the peer's credentials as the
// kernel reports them in init's namespaces. The host's Manager runs
// outside the sandbox's pid namespace, so its pid reads as 0, and as host
// root, which the sandbox's user namespace does not map, so its uid and
// gid read as the overflow ids. Every process of this sandbox has a pid
// here; a process of another sandbox (same id mapping) has a mapped uid:
// commands run as uid 1000 without capabilities and cannot become the
// namespace's "nobody" (65534, the one mapped id that looks like overflow).

// overflowIDs returns the kernel's overflow uid and gid (65534 unless the
// host changed them), read before pivot_root while the host's /proc is
// still mounted.
func overflowIDs() (uid, gid uint32) {
	read := func(p string) uint32 {
		b, err := os.ReadFile(p)
		if err != nil {
			return 65534
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
		if err != nil {
			return 65534
		}
		return uint32(n)
	}
	return read("/proc/sys/kernel/overflowuid"), read("/proc/sys/kernel/overflowgid")
}

// errNotHost is the answer to a connection from anything but the host.
var errNotHost = errors.New("peer is not the host")

// checkPeer accepts a connection only from outside the sandbox's pid
// namespace and from an id the sandbox's user namespace does not map.
func (s *server) checkPeer(fd int) error {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return err
	}
	if cred.Pid != 0 || cred.Uid != s.hostUID || cred.Gid != s.hostGID {
		return errNotHost
	}
	return nil
}
