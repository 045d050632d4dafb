package sandbox

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	bullpen "github.com/bullpen-hq/bullpen"
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
	// init binds it from inside the sandbox's user namespace, as an
	// unprivileged host uid: every directory on the way must let others
	// through, and the directory itself must be readable by others.
	if st.Mode().Perm()&0o005 != 0o005 {
		return invalid("mount: host path %s must be readable by others (chmod o+rx)", c)
	}
	for d := filepath.Dir(c); d != "/"; d = filepath.Dir(d) {
		if pst, err := os.Stat(d); err != nil || pst.Mode().Perm()&0o001 == 0 {
			return invalid("mount: host directory %s must be traversable by others (chmod o+x)", d)
		}
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

// mountBinds are the init binds for the sandbox's Spec.Mounts.
func mountBinds(ms []Mount) []bindMount {
	out := make([]bindMount, 0, len(ms))
	for _, mt := range ms {
		out = append(out, bindMount{Src: filepath.Clean(mt.HostPath), Dst: path.Clean(mt.Path)})
	}
	return out
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
