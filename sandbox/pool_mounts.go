package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// A pooled init's mount namespace is copied when it starts, before its
// sandbox's root filesystem exists; that reaches it by propagation, from
// runDir made a shared mount (its copy in the init's less privileged
// namespace is a slave). Unmounts propagate too, so a destroyed sandbox's
// overlay (and the disk under it) is not held by pooled inits.

// mountState reports whether dir is a mount point, whether it is shared,
// and whether anything is mounted below it.
func mountState(dir string) (mounted, shared, below bool, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false, false, false, fmt.Errorf("sandbox: mountinfo: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 7 {
			continue
		}
		switch mp := fs[4]; {
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
			below = true
		}
	}
	return mounted, shared, below, sc.Err()
}

// shareRunDir makes runDir a shared mount: a bind onto itself if it is no
// mount point yet. It reports false (and the pool stays off) when runDir
// is no mount point but has sandboxes mounted below it, left by a process
// that ran without a pool: a bind would hide those mounts, not carry them.
func (m *Manager) shareRunDir() (bool, error) {
	mounted, shared, below, err := mountState(m.runDir)
	if err != nil {
		return false, err
	}
	if shared {
		return true, nil
	}
	if !mounted {
		if below {
			return false, nil
		}
		if err := unix.Mount(m.runDir, m.runDir, "", unix.MS_BIND, ""); err != nil {
			return false, fmt.Errorf("sandbox: bind run dir: %w", err)
		}
	}
	if err := unix.Mount("", m.runDir, "", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return false, fmt.Errorf("sandbox: share run dir: %w", err)
	}
	return true, nil
}

// unshareRunDir undoes shareRunDir's bind when no sandbox is mounted
// below runDir any more (sandboxes outlive the Manager).
func (m *Manager) unshareRunDir() {
	mounted, _, below, err := mountState(m.runDir)
	if err != nil || !mounted || below {
		return
	}
	_ = unix.Unmount(m.runDir, 0)
}
