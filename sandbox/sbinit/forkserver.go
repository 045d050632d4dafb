package sbinit

import (
	"errors"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// The fork-server is the init binary in a mode of its own: one small
// process per host Manager that clones and executes the sandboxes' inits,
// so that the host (a big Go process, which cannot vfork into a new user
// namespace) never forks: a clone copies the forking process's page
// tables while holding its mmap lock, stalling each of its threads that
// faults meanwhile. The fork-server's few megabytes copy at once.
//
// Protocol, on a SOCK_SEQPACKET socket at ForkServerFd: one request per
// message (EncodeForkRequest) carrying, by SCM_RIGHTS, the init's ListenFd,
// StatusFd and GoFd and its log (stdout and stderr), in that order; one
// answer per request: "ok <pid>" with the init's pidfd, or "error: ...".
// EOF (the host closed its end or died) makes the fork-server exit; the
// inits it started keep running (they are in sessions of their own).

// EnvForkServer marks the process as a fork-server.
const EnvForkServer = "BULLPEN_SANDBOX_FORKSERVER"

// ForkServerFd is the fork-server's end of its socket to the host.
const ForkServerFd = 3

// ForkServerName is the fork-server's process name (comm).
const ForkServerName = "bullpen-forksrv"

// forkFds is how many fds a request carries.
const forkFds = 4

// maxForkRequest bounds a request (its environment holds init's Config).
const maxForkRequest = 1 << 20

// InitSysProcAttr is how an init starts: in new namespaces (but no cgroup
// one: init is not in its cgroups yet; its spawner thread enters one
// itself once it is, see GoFd) as the root of its user namespace, whose
// ids map to host ids from base, in a session of its own.
func InitSysProcAttr(base int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
			syscall.CLONE_NEWNET | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: base, Size: 65536}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: base, Size: 65536}},
		GidMappingsEnableSetgroups: true,
		Credential:                 &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{}},
		Setsid:                     true,
	}
}

// EncodeForkRequest encodes a request to start an init with args and env
// whose ids map from base: NUL-terminated fields base, len(args), the
// args, the env entries.
func EncodeForkRequest(base int, args, env []string) []byte {
	b := strconv.AppendInt(nil, int64(base), 10)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, 0)
	for _, s := range append(args[:len(args):len(args)], env...) {
		b = append(append(b, s...), 0)
	}
	return b
}

func decodeForkRequest(b []byte) (base int, args, env []string, err error) {
	var f []string
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != 0 {
			i++
		}
		if i == len(b) {
			return 0, nil, nil, errors.New("request field not terminated")
		}
		f, b = append(f, string(b[:i])), b[i+1:]
	}
	if len(f) < 2 {
		return 0, nil, nil, errors.New("short request")
	}
	base, err1 := strconv.Atoi(f[0])
	n, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || base <= 0 || n < 1 || n > len(f)-2 {
		return 0, nil, nil, errors.New("bad request header")
	}
	return base, f[2 : 2+n], f[2+n:], nil
}

// runForkServer serves requests until the host's end closes.
func runForkServer() {
	setName(ForkServerName)
	os.Clearenv()
	_, _ = unix.FcntlInt(ForkServerFd, unix.F_SETFD, unix.FD_CLOEXEC)
	devnull, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Exit(1)
	}
	forked := make(chan struct{}, 1)
	go reapForked(forked)
	buf := make([]byte, maxForkRequest)
	oob := make([]byte, unix.CmsgSpace(4*forkFds))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(ForkServerFd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			os.Exit(0)
		}
		fds, _ := ParseRights(oob[:oobn])
		ans, pidfd := serveFork(buf[:n], fds, flags, devnull)
		for _, fd := range fds {
			unix.Close(fd)
		}
		var rights []byte
		if pidfd >= 0 {
			rights = unix.UnixRights(pidfd)
		}
		err = unix.Sendmsg(ForkServerFd, ans, rights, nil, unix.MSG_NOSIGNAL)
		if pidfd >= 0 {
			unix.Close(pidfd)
		}
		if err != nil {
			os.Exit(0)
		}
		select {
		case forked <- struct{}{}:
		default:
		}
	}
}

// serveFork starts the init of one request; it returns the answer and
// the init's pidfd (-1 on error).
func serveFork(req []byte, fds []int, flags, devnull int) ([]byte, int) {
	if flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 || len(fds) != forkFds {
		return []byte("error: fork-server: malformed request"), -1
	}
	base, args, env, err := decodeForkRequest(req)
	if err != nil {
		return []byte("error: fork-server: " + err.Error()), -1
	}
	sys := InitSysProcAttr(base)
	pidfd := -1
	sys.PidFD = &pidfd
	log := uintptr(fds[3])
	// The fork-server is the init binary: it executes itself.
	pid, err := syscall.ForkExec("/proc/self/exe", args, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{uintptr(devnull), log, log, uintptr(fds[0]), uintptr(fds[1]), uintptr(fds[2])},
		Sys:   sys,
	})
	if err != nil {
		return []byte("error: fork/exec init: " + err.Error()), -1
	}
	if pidfd < 0 {
		_ = unix.Kill(pid, unix.SIGKILL)
		return []byte("error: fork-server: no pidfd"), -1
	}
	return []byte("ok " + strconv.Itoa(pid)), pidfd
}

// reapForked reaps the inits this process started (the host watches them
// through their pidfds); with no child it waits for the next fork.
func reapForked(forked <-chan struct{}) {
	for {
		var ws unix.WaitStatus
		_, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.ECHILD) {
			<-forked
		}
	}
}
