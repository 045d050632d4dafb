package sandbox

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	bullpen "github.com/bullpen-hq/bullpen"
	"golang.org/x/sys/unix"
)

// maxMounts and maxBridges bound Spec.Mounts and Spec.Bridges.
const (
	maxMounts  = 16
	maxBridges = 8
)

// reservedPaths are the sandbox directories init builds or the host image
// needs; a mount on or above them would hide or replace them. A mount
// below /home, /opt, /srv, /mnt or /var is fine.
var reservedPaths = []string{"/proc", "/dev", "/sys", "/etc", "/usr", "/bin", "/sbin", "/lib",
	"/lib32", "/lib64", "/libx32", "/tmp", "/run", "/root", "/var/tmp"}

// checkMounts validates Spec.Mounts (hostRoots are directories the host
// must keep to itself: the Manager's state and run dirs).
func checkMounts(ms []Mount, hostRoots ...string) error {
	if len(ms) > maxMounts {
		return invalid("too many mounts (max %d)", maxMounts)
	}
	seen := map[string]bool{}
	for _, mt := range ms {
		if err := checkMountPath(mt.Path); err != nil {
			return err
		}
		if seen[path.Clean(mt.Path)] {
			return invalid("mount: %s is mounted twice", mt.Path)
		}
		seen[path.Clean(mt.Path)] = true
		if err := checkHostPath(mt.HostPath, hostRoots); err != nil {
			return err
		}
	}
	return nil
}

func checkMountPath(p string) error {
	if !path.IsAbs(p) || len(p) > 1024 || strings.ContainsAny(p, "\x00,:") {
		return invalid("mount: path %q must be an absolute path", p)
	}
	c := path.Clean(p)
	if c == "/" || c == "/home" || c == "/var" {
		return invalid("mount: cannot mount over %s", c)
	}
	for _, r := range reservedPaths {
		if c == r || strings.HasPrefix(c, r+"/") || strings.HasPrefix(r, c+"/") {
			return invalid("mount: %s would cover %s, which the sandbox needs", c, r)
		}
	}
	return nil
}

func checkHostPath(hp string, hostRoots []string) error {
	if !filepath.IsAbs(hp) || strings.ContainsAny(hp, "\x00") {
		return invalid("mount: host path %q must be an absolute path", hp)
	}
	c := filepath.Clean(hp)
	if c == "/" {
		return invalid("mount: cannot share the host's root")
	}
	for _, r := range hostRoots {
		if r != "" && (c == r || strings.HasPrefix(c, r+"/") || strings.HasPrefix(r, c+"/")) {
			return invalid("mount: host path %s overlaps the sandbox manager's own directory", c)
		}
	}
	st, err := os.Stat(c)
	if err != nil {
		return invalid("mount: host path %s: %v", c, err)
	}
	if !st.IsDir() {
		return invalid("mount: host path %s is not a directory", c)
	}
	return nil
}

// checkBridges validates Spec.Bridges against each other and the ports the
// sandbox publishes (a bridge port is taken by the Manager's listener).
func checkBridges(bs []Bridge, ports []int) error {
	if len(bs) > maxBridges {
		return invalid("too many bridges (max %d)", maxBridges)
	}
	used := map[int]bool{}
	for _, p := range ports {
		used[p] = true
	}
	for _, b := range bs {
		if b.Port < 1 || b.Port > 65535 {
			return invalid("bridge: invalid port %d", b.Port)
		}
		if used[b.Port] {
			return invalid("bridge: port %d is used twice", b.Port)
		}
		used[b.Port] = true
		if !filepath.IsAbs(b.HostSocket) || len(b.HostSocket) > 107 || strings.ContainsAny(b.HostSocket, "\x00") {
			return invalid("bridge: host socket %q must be an absolute path of at most 107 bytes", b.HostSocket)
		}
	}
	return nil
}

// bindMounts bind-mounts Spec.Mounts read-only onto their mount points in
// the sandbox's root filesystem, on the host (as real root, so the host
// path need not be reachable by the sandbox uids). init's recursive bind
// of the root takes them along, and as they come from a more privileged
// mount namespace their read-only flag is locked: not even root inside can
// remount them writable. Each mount point is opened with openat2 without
// following any symlink (the sandbox can write its file tree while it is
// stopped) and mounted on through /proc/self/fd, so a mount lands exactly
// there and never elsewhere on the host.
func bindMounts(rootfs string, ms []Mount) error {
	for _, mt := range ms {
		target := filepath.Join(rootfs, path.Clean(mt.Path))
		if isMounted(target) {
			continue
		}
		if err := bindOne(rootfs, filepath.Clean(mt.HostPath), path.Clean(mt.Path)); err != nil {
			return err
		}
	}
	return nil
}

func bindOne(rootfs, src, dst string) error {
	root, err := unix.Open(rootfs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: mount %s: %w", dst, err)
	}
	defer unix.Close(root)
	fd, err := unix.Openat2(root, dst, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV})
	if err != nil {
		return bullpen.Errorf(bullpen.EINVALID, "mount: mount point %s in the sandbox: %v", dst, err)
	}
	defer unix.Close(fd)
	// The bind is made read-only while still detached, then attached:
	// a mount propagates with the flags it had when it was attached (into
	// a pooled init, which was cloned before it; see pool_mounts.go), a
	// later remount does not. The source is cloned from the host's mount
	// namespace (on a thread of the host's: this one is in the Manager's),
	// so a host mount made after the Manager started is seen as it is on
	// the host even where mounts do not propagate into the Manager's.
	tree, err := onHostThread(func() (int, error) {
		return unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	})
	if err != nil {
		return fmt.Errorf("sandbox: mount %s at %s: %w", src, dst, err)
	}
	defer unix.Close(tree)
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, attr); err != nil {
		return fmt.Errorf("sandbox: mount %s read-only: %w", dst, err)
	}
	if err := unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("sandbox: mount %s at %s: %w", src, dst, err)
	}
	return nil
}

// prepareMounts makes the mount points of Spec.Mounts in the sandbox's
// root filesystem (owned by the sandbox's root, like the host binds').
func prepareMounts(sys *fsRoot, ms []Mount) error {
	for _, mt := range ms {
		p := path.Clean(mt.Path)
		if fi, err := sys.stat(p); err == nil {
			if !fi.IsDir {
				return bullpen.Errorf(bullpen.EINVALID, "mount: %s exists in the sandbox and is not a directory", p)
			}
			continue
		}
		if err := sys.mkdir(p, true, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// CheckBridges checks bridges as Create and Attach do, against the
// sandbox's published ports: for other drivers.
func CheckBridges(bs []Bridge, ports []int) error { return checkBridges(bs, ports) }
