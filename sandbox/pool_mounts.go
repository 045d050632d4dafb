package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A pooled init's mount namespace is copied when it starts, before its
// sandbox's root filesystem exists; that reaches it by propagation, from
// runDir made a shared mount (its copy in the init's less privileged
// namespace is a slave). Unmounts propagate too, so a destroyed sandbox's
// overlay (and the disk under it) is not held by pooled inits.

// mountState reports (from /proc/self/mountinfo) whether dir is a mount
// point, whether it is shared, and the mount points below it, in mount
// order.
func mountState(dir string) (mounted, shared bool, below []string, err error) {
	f, err := os.Open("/proc/thread-self/mountinfo") // this thread's mount namespace
	if err != nil {
		return false, false, nil, fmt.Errorf("sandbox: mountinfo: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 7 {
			continue
		}
		switch mp := unescapeMount(fs[4]); {
		case mp == dir:
			mounted = true
			shared = false // the last mount on dir is the visible one
			for _, o := range fs[6:] {
				if o == "-" {
					break
				}
				shared = shared || strings.HasPrefix(o, "shared:")
			}
		case strings.HasPrefix(mp, dir+"/"):
			below = append(below, mp)
		}
	}
	return mounted, shared, below, sc.Err()
}

// shareRunDir makes runDir a shared mount: a recursive bind onto itself
// if it is no mount point yet (sandboxes a process without a pool left
// mounted below it are carried into the bind).
func (m *Manager) shareRunDir() error {
	mounted, shared, below, err := mountState(m.runDir)
	if err != nil || shared {
		return err
	}
	if !mounted {
		if err := bindOverMounts(m.runDir, below); err != nil {
			return err
		}
	}
	if err := unix.Mount("", m.runDir, "", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("sandbox: share run dir: %w", err)
	}
	return nil
}

// bindOverMounts binds dir recursively onto itself and detaches the
// mounts (below, in mount order) that the bind copied and now covers:
// left there, out of sight, they would pin those sandboxes' disks.
func bindOverMounts(dir string, below []string) error {
	under, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: run dir: %w", err)
	}
	defer unix.Close(under)
	if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("sandbox: bind run dir: %w", err)
	}
	// Through the fd opened before the bind, paths resolve beneath it.
	for i := len(below) - 1; i >= 0; i-- {
		p := "/proc/self/fd/" + strconv.Itoa(under) + strings.TrimPrefix(below[i], dir)
		_ = unix.Unmount(p, unix.MNT_DETACH)
	}
	return nil
}

// unshareRunDir undoes shareRunDir's bind when no sandbox is mounted
// below runDir any more (sandboxes outlive the Manager).
func (m *Manager) unshareRunDir() {
	mounted, _, below, err := mountState(m.runDir)
	if err != nil || !mounted || len(below) > 0 {
		return
	}
	_ = unix.Unmount(m.runDir, 0)
}
