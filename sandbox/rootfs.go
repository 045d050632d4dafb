package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
	"golang.org/x/sys/unix"
)

const (
	sandboxUID  = 1000
	skeletonVer = "bullpen-host-base-v1"
)

// hostBinds returns the read-only host binds of the "host" image: the host's
// /usr and friends (symlinks such as a merged-/usr /bin are replicated in
// the skeleton instead).
func hostBinds() []bindMount {
	var b []bindMount
	for _, p := range []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
		"/etc/alternatives", "/etc/ssl", "/etc/ca-certificates", "/etc/ld.so.cache", "/etc/localtime"} {
		st, err := os.Lstat(p)
		if err != nil || st.Mode()&os.ModeSymlink != 0 {
			continue
		}
		b = append(b, bindMount{Src: p, Dst: p})
	}
	return b
}

// buildSkeleton writes the host-tools base skeleton into dir (once).
func buildSkeleton(dir string, base uint32, binds []bindMount) error {
	if b, err := os.ReadFile(filepath.Join(dir, ".bullpen-skeleton")); err == nil && string(b) == skeletonVer {
		return nil
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	root, gid := int(base), int(base)
	user := int(base) + sandboxUID
	dirs := []struct {
		p    string
		mode os.FileMode
		uid  int
	}{
		{"", 0o755, root}, {"etc", 0o755, root}, {"home", 0o755, root}, {"home/sandbox", 0o755, user},
		{"tmp", 0o1777, root}, {"var", 0o755, root}, {"var/tmp", 0o1777, root}, {"root", 0o700, root},
		{"proc", 0o555, root}, {"dev", 0o755, root}, {"sys", 0o555, root}, {"run", 0o755, root},
		{"mnt", 0o755, root}, {"opt", 0o755, root}, {"srv", 0o755, root},
	}
	for _, d := range dirs {
		p := filepath.Join(tmp, d.p)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
		if err := unix.Chmod(p, uint32(d.mode.Perm())|stickyBit(d.mode)); err != nil {
			return err
		}
		if err := os.Lchown(p, d.uid, d.uid); err != nil {
			return err
		}
	}
	files := map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000:sandbox:/home/sandbox:/bin/bash\n" +
			"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"etc/group":         "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n",
		"etc/hosts":         "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n",
		"etc/resolv.conf":   "# no DNS: sandbox network is off or limited to an allowlist\n",
		"etc/nsswitch.conf": "passwd: files\ngroup: files\nhosts: files dns\n",
		"etc/hostname":      "sandbox\n",
		".bullpen-skeleton": skeletonVer,
	}
	for _, b := range binds {
		p := filepath.Join(tmp, b.Dst)
		st, err := os.Stat(b.Src)
		if err != nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if st.IsDir() {
			err = os.MkdirAll(p, 0o755)
		} else {
			err = os.WriteFile(p, nil, 0o644)
		}
		if err != nil {
			return err
		}
	}
	// Replicate the host's top-level symlinks (merged /usr: /bin -> usr/bin).
	for _, p := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		if t, err := os.Readlink(p); err == nil {
			if err := os.Symlink(t, filepath.Join(tmp, p)); err != nil {
				return err
			}
		}
	}
	for name, body := range files {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	if err := filepath.Walk(tmp, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p == filepath.Join(tmp, "home/sandbox") {
			return os.Lchown(p, user, user)
		}
		return os.Lchown(p, root, gid)
	}); err != nil {
		return err
	}
	os.RemoveAll(dir)
	return os.Rename(tmp, dir)
}

func stickyBit(m os.FileMode) uint32 {
	if m&os.ModeSticky != 0 {
		return unix.S_ISVTX
	}
	return 0
}

// mountOverlay mounts an overlay of lowers (lowest first) with upper and
// work at target. The host mounts it, so copy-up works whatever the owners
// of the lower files are. redirect_dir and metacopy stay off so that the
// upper directory is a self-contained layer (Snapshot, image Commit).
func mountOverlay(lowers []string, upper, work, target string) error {
	rev := make([]string, len(lowers))
	for i, l := range lowers {
		if strings.ContainsAny(l, ":,") {
			return fmt.Errorf("sandbox: layer path %q contains ':' or ','", l)
		}
		rev[len(lowers)-1-i] = l
	}
	refs, done, err := fdPaths(append(rev, upper, work)) // no host paths in the options
	if err != nil {
		return err
	}
	defer done()
	n := len(rev)
	opts := "lowerdir=" + strings.Join(refs[:n], ":") + ",upperdir=" + refs[n] + ",workdir=" + refs[n+1] +
		",redirect_dir=off,metacopy=off,index=off"
	if len(opts) > 4000 {
		return bullpen.Errorf(bullpen.EUNSUPPORTED, "image has too many layers for one overlay mount")
	}
	if err := unix.Mount("overlay", target, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("sandbox: mount overlay: %w", err)
	}
	return nil
}

// isMounted reports whether path is a mount point. statx says so in
// microseconds; reading mountinfo, the fallback for kernels before 5.8,
// takes milliseconds on a host with hundreds of sandboxes (a few mounts
// each), and terminate and start asked several times.
func isMounted(path string) bool {
	var stx unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_BASIC_STATS, &stx)
	if err != nil {
		return false
	}
	if stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 {
		return stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
	}
	return isMountedByMountinfo(path)
}

// isMountedByMountinfo is isMounted by /proc/self/mountinfo.
func isMountedByMountinfo(path string) bool {
	mounted, _, _, _ := mountState(path)
	return mounted
}

func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// unmountAll unmounts path (repeatedly, in case of stacked mounts).
func unmountAll(path string) error {
	for i := 0; i < 8 && isMounted(path); i++ {
		if err := unix.Unmount(path, 0); err != nil {
			if errors.Is(err, unix.EBUSY) {
				time.Sleep(20 * time.Millisecond)
				if err := unix.Unmount(path, unix.MNT_DETACH); err != nil {
					return fmt.Errorf("sandbox: unmount %s: %w", path, err)
				}
				continue
			}
			if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
				return nil
			}
			return fmt.Errorf("sandbox: unmount %s: %w", path, err)
		}
	}
	return nil
}
