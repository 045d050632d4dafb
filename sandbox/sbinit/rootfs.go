package sbinit

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// setupRootfs mounts /proc, /dev and the read-only host binds under the
// root filesystem and pivots into it.
func setupRootfs(cfg *Config) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return wrap("make / private", err)
	}
	root := cfg.Rootfs
	// The host's overlay mount is locked in this (less privileged) mount
	// namespace, and pivot_root refuses locked mounts: bind it onto itself.
	if err := unix.Mount(root, root, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return wrap("bind rootfs", err)
	}
	for _, b := range cfg.Binds {
		t := filepath.Join(root, b.Dst)
		if err := unix.Mount(b.Src, t, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return wrap("bind "+b.Dst, err)
		}
		if err := setReadonly(t); err != nil {
			return wrap("bind "+b.Dst+" read-only", err)
		}
	}
	proc := filepath.Join(root, "proc")
	if err := unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return wrap("mount proc", err)
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
		return wrap("chdir rootfs", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return wrap("pivot_root", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return wrap("detach old root", err)
	}
	return unix.Chdir("/")
}

func setReadonly(path string) error {
	return unix.MountSetattr(unix.AT_FDCWD, path, unix.AT_RECURSIVE,
		&unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV})
}

// devNodes are the host's device nodes bound into every sandbox's /dev.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// setupDev builds a minimal /dev: a tmpfs with the host's null, zero,
// full, random, urandom and tty bound in, a private devpts and /dev/shm.
func setupDev(dev string) error {
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=755,size=256k"); err != nil {
		return wrap("mount /dev", err)
	}
	for _, n := range devNodes {
		t := filepath.Join(dev, n)
		fd, err := unix.Open(t, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o666)
		if err != nil {
			return wrap("/dev/"+n, err)
		}
		unix.Close(fd)
		if err := unix.Mount("/dev/"+n, t, "", unix.MS_BIND, ""); err != nil {
			return wrap("bind /dev/"+n, err)
		}
	}
	for _, l := range [][2]string{{"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"},
		{"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}, {"ptmx", "pts/ptmx"}} {
		if err := unix.Symlink(l[1], filepath.Join(dev, l[0])); err != nil {
			return wrap("/dev/"+l[0], err)
		}
	}
	for _, d := range []string{"pts", "shm"} {
		if err := unix.Mkdir(filepath.Join(dev, d), 0o755); err != nil {
			return wrap("/dev/"+d, err)
		}
	}
	if err := unix.Mount("devpts", filepath.Join(dev, "pts"), "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return wrap("mount devpts", err)
	}
	if err := unix.Mount("shm", filepath.Join(dev, "shm"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=1777,size=64m"); err != nil {
		return wrap("mount /dev/shm", err)
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
