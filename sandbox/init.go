package sandbox

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// initEnv marks a re-executed process as a sandbox init; its value is the
// JSON initConfig.
const initEnv = "BULLPEN_SANDBOX_INIT"

// Fds passed to init by the host.
const (
	initListenFd = 3 // unix listener for exec requests
	initStatusFd = 4 // pipe: init writes "ok" or an error, then closes
)

// initConfig is what the host tells init about the sandbox to build.
type initConfig struct {
	Rootfs   string      `json:"rootfs"`
	Hostname string      `json:"hostname"`
	Binds    []bindMount `json:"binds,omitempty"`
	UID      int         `json:"uid"`
	GID      int         `json:"gid"`
}

// bindMount is a read-only bind of a host path into the root filesystem.
type bindMount struct {
	Src string `json:"src"`
	Dst string `json:"dst"`
}

// MaybeRunInit turns the process into a sandbox init if it was started as
// one by a Manager, and never returns in that case. Call it first thing in
// main (and in TestMain of tests that create sandboxes): the Manager
// re-executes /proc/self/exe to start each sandbox's PID 1.
func MaybeRunInit() {
	v := os.Getenv(initEnv)
	if v == "" {
		return
	}
	status := os.NewFile(initStatusFd, "status")
	err := runInit(v, status)
	if status != nil {
		fmt.Fprintf(status, "error: %v\n", err)
	}
	os.Exit(1)
}

// runInit sets the sandbox up, reports readiness and serves exec requests
// until the sandbox is killed. It returns only on a setup error.
func runInit(raw string, status *os.File) error {
	var cfg initConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return fmt.Errorf("decode config: %w", err)
	}
	os.Clearenv()
	if err := setupRootfs(&cfg); err != nil {
		return err
	}
	if err := unix.Sethostname([]byte(cfg.Hostname)); err != nil {
		return fmt.Errorf("sethostname: %w", err)
	}
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	// Keep sandbox processes (other uids anyway) out of init's /proc.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("set non-dumpable: %w", err)
	}
	lf := os.NewFile(initListenFd, "listener")
	l, err := net.FileListener(lf)
	if err != nil {
		return fmt.Errorf("listener: %w", err)
	}
	lf.Close()
	srv := newInitServer(cfg.UID, cfg.GID)
	tid, err := srv.startSpawner()
	if err != nil {
		return err
	}
	go srv.reap()
	// The host moves the spawner thread (whose children are the commands)
	// into the sandbox's "user" cgroup.
	if _, err := fmt.Fprintf(status, "ok %d\n", tid); err != nil {
		return err
	}
	status.Close()
	debug.FreeOSMemory()
	srv.serve(l.(*net.UnixListener))
	return fmt.Errorf("listener closed")
}

// setupRootfs mounts /proc, /dev and the read-only host binds under the
// root filesystem and pivots into it.
func setupRootfs(cfg *initConfig) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	root := cfg.Rootfs
	// The host's overlay mount is locked in this (less privileged) mount
	// namespace, and pivot_root refuses locked mounts: bind it onto itself.
	if err := unix.Mount(root, root, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind rootfs: %w", err)
	}
	for _, b := range cfg.Binds {
		t := filepath.Join(root, b.Dst)
		if err := unix.Mount(b.Src, t, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", b.Dst, err)
		}
		if err := setReadonly(t); err != nil {
			return fmt.Errorf("bind %s read-only: %w", b.Dst, err)
		}
	}
	proc := filepath.Join(root, "proc")
	if err := unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount proc: %w", err)
	}
	if err := setupDev(filepath.Join(root, "dev")); err != nil {
		return err
	}
	// Best effort, as in Docker's default: read-only /proc/sys and
	// sysrq-trigger, masked kcore/keys/timer_list.
	for _, p := range []string{"sys", "sysrq-trigger", "irq", "bus"} {
		t := filepath.Join(proc, p)
		if unix.Mount(t, t, "", unix.MS_BIND|unix.MS_REC, "") == nil {
			_ = setReadonly(t)
		}
	}
	for _, p := range []string{"kcore", "keys", "timer_list", "sched_debug"} {
		_ = unix.Mount(filepath.Join(root, "dev/null"), filepath.Join(proc, p), "", unix.MS_BIND, "")
	}
	_ = unix.MountSetattr(unix.AT_FDCWD, root, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV})
	if err := unix.Chdir(root); err != nil {
		return fmt.Errorf("chdir rootfs: %w", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach old root: %w", err)
	}
	return unix.Chdir("/")
}

func setReadonly(path string) error {
	return unix.MountSetattr(unix.AT_FDCWD, path, unix.AT_RECURSIVE,
		&unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV})
}

// setupDev builds a minimal /dev: a tmpfs with the host's null, zero,
// full, random, urandom and tty bound in, a private devpts and /dev/shm.
func setupDev(dev string) error {
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=755,size=256k"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, n := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		t := filepath.Join(dev, n)
		if err := os.WriteFile(t, nil, 0o666); err != nil {
			return fmt.Errorf("/dev/%s: %w", n, err)
		}
		if err := unix.Mount("/dev/"+n, t, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind /dev/%s: %w", n, err)
		}
	}
	links := map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx"}
	for n, target := range links {
		if err := os.Symlink(target, filepath.Join(dev, n)); err != nil {
			return fmt.Errorf("/dev/%s: %w", n, err)
		}
	}
	for _, d := range []string{"pts", "shm"} {
		if err := os.Mkdir(filepath.Join(dev, d), 0o755); err != nil {
			return fmt.Errorf("/dev/%s: %w", d, err)
		}
	}
	if err := unix.Mount("devpts", filepath.Join(dev, "pts"), "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mount devpts: %w", err)
	}
	if err := unix.Mount("shm", filepath.Join(dev, "shm"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=1777,size=64m"); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	return nil
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
