package sandbox

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// ownMounts returns the mount points in the mountinfo text mi that are
// the Manager's (at or below its run dir, cgroup-lock dir or state dir),
// in mount order.
func (m *Manager) ownMounts(mi string) []string {
	roots := []string{m.runDir, m.runDir + ".cgroup-lock", m.cfg.StateDir}
	var out []string
	for _, line := range strings.Split(mi, "\n") {
		fs := strings.Fields(line)
		if len(fs) < 5 {
			continue
		}
		mp := unescapeMount(fs[4])
		for _, r := range roots {
			if mp == r || strings.HasPrefix(mp, r+"/") {
				out = append(out, mp)
				break
			}
		}
	}
	return out
}

// closeMountNS ends the mount namespace's threads and, when no mount of a
// sandbox is left in it, removes what keeps it on the host (the namespace
// then goes with its last process). With sandboxes left, a later New
// joins it.
func (m *Manager) closeMountNS() {
	mi, err := m.mnt.mountinfo()
	m.mnt.close(err == nil && len(m.ownMounts(mi)) == 0)
}

// moveHostMounts takes the mounts a Manager of an earlier version left in
// the host's namespace (sandboxes it ran, a shared run dir) out of it: the
// new namespace has its copies, made private first so that the host's
// unmounts do not reach them.
func (m *Manager) moveHostMounts() {
	host, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		return
	}
	own := m.ownMounts(string(host))
	if len(own) == 0 {
		return
	}
	_ = m.mnt.do(func() error {
		for _, p := range own {
			_ = unix.Mount("", p, "", unix.MS_PRIVATE, "")
		}
		return nil
	})
	for i := len(own) - 1; i >= 0; i-- {
		_ = unix.Unmount(own[i], unix.MNT_DETACH)
	}
}
