package sbinit

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A pooled init is started before its sandbox exists (the host keeps a
// few ready, so that a create skips the clone, the runtime start and the
// cgroup moves). Its mount namespace is a copy of the host's at clone
// time; the sandbox's root filesystem, mounted later, reaches it because
// the host's Rootfs directory is a shared mount (a copy in this less
// privileged namespace is its slave).

// Layout of the staging root a pooled init pivots into.
const (
	stageRun   = "/run" // Config.Rootfs, bound recursively: still a slave
	stageBinds = "/b"   // /b/<i>: the source of Config.Binds[i]
)

// Assignment is the line the host writes on a pooled init's GoFd to make
// it the init of sandbox id: its root filesystem is Rootfs/id, its
// hostname hostname, and it binds the host paths only with hostBase.
func Assignment(id, hostname string, hostBase bool) []byte {
	hb := "0"
	if hostBase {
		hb = "1"
	}
	return []byte("a " + hb + " " + id + " " + hostname + "\n")
}

// runPooled stages, reports "pooled", waits for the assignment and then
// builds the assigned sandbox.
func runPooled(cfg *Config, status *os.File) error {
	if err := stage(cfg); err != nil {
		return err
	}
	if _, err := status.WriteString("pooled\n"); err != nil {
		return err
	}
	goFd := os.NewFile(GoFd, "go")
	line, err := readLine(goFd)
	goFd.Close()
	if len(line) == 0 {
		// The host closed the pool or died: nobody will assign this init.
		os.Exit(0)
	}
	if err != nil {
		return wrap("read assignment", err)
	}
	if err := parseAssignment(line, cfg); err != nil {
		return err
	}
	return setup(cfg)
}

// readLine reads up to and without a newline (at most 1 KiB).
func readLine(f *os.File) (string, error) {
	var buf [1024]byte
	n := 0
	for n < len(buf) {
		k, err := f.Read(buf[n:])
		n += k
		if i := strings.IndexByte(string(buf[:n]), '\n'); i >= 0 {
			return string(buf[:i]), nil
		}
		if err != nil {
			return string(buf[:n]), err
		}
	}
	return string(buf[:n]), errors.New("assignment too long")
}

// parseAssignment applies an Assignment line to cfg (staged paths).
func parseAssignment(line string, cfg *Config) error {
	f := strings.SplitN(line, " ", 4)
	if len(f) != 4 || f[0] != "a" || (f[1] != "0" && f[1] != "1") ||
		f[2] == "" || f[2] == "." || f[2] == ".." || strings.ContainsRune(f[2], '/') || f[3] == "" {
		return errors.New("bad assignment " + strconv.Quote(line))
	}
	cfg.Rootfs = stageRun + "/" + f[2]
	cfg.Hostname = f[3]
	if f[1] == "0" {
		cfg.Binds = nil
	}
	return nil
}

// stage builds the staging root at cfg.Stage and pivots into it, so that
// this init stops holding copies of the host's other mounts (another
// sandbox's disk stays attached as long as any namespace holds it). It
// rewrites cfg's paths to the staged ones.
func stage(cfg *Config) error {
	t := cfg.Stage
	if err := unix.Mount("stage", t, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=700,size=64k"); err != nil {
		return wrap("mount staging tmpfs", err)
	}
	if err := bindAt(cfg.Rootfs, filepath.Join(t, stageRun)); err != nil {
		return err
	}
	for i := range cfg.Binds {
		p := stageBinds + "/" + strconv.Itoa(i)
		if err := bindAt(cfg.Binds[i].Src, filepath.Join(t, p)); err != nil {
			return err
		}
		cfg.Binds[i].Src = p
	}
	for _, n := range devNodes {
		if err := bindAt("/dev/"+n, filepath.Join(t, "dev", n)); err != nil {
			return err
		}
	}
	// The kernel lets a user namespace mount a procfs only where one is
	// fully visible already (mount_too_revealing): keep the host's.
	if err := bindAt("/proc", filepath.Join(t, "proc")); err != nil {
		return err
	}
	if err := unix.Chdir(t); err != nil {
		return wrap("chdir staging root", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return wrap("pivot_root into staging root", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return wrap("detach host root", err)
	}
	cfg.Rootfs = stageRun
	return unix.Chdir("/")
}

// bindAt binds src (recursively) at dst, making dst (a directory or an
// empty file, like src) and its parents first.
func bindAt(src, dst string) error {
	var st unix.Stat_t
	if err := unix.Stat(src, &st); err != nil {
		return wrap("stage "+src, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return wrap("stage "+src, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := unix.Mkdir(dst, 0o755); err != nil {
			return wrap("stage "+src, err)
		}
	} else {
		fd, err := unix.Open(dst, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return wrap("stage "+src, err)
		}
		unix.Close(fd)
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return wrap("stage bind "+src, err)
	}
	return nil
}
