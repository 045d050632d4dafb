package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// hostMemory is the host's RAM in bytes, 0 when unknown.
func hostMemory() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// hostDisk is the size in bytes of the file system that holds the
// sandboxes' writable layers (StateDir), 0 when unknown.
func (m *Manager) hostDisk() int64 {
	var st unix.Statfs_t
	if unix.Statfs(m.cfg.StateDir, &st) != nil {
		return 0
	}
	return int64(st.Blocks) * st.Bsize
}

// checkHostFits refuses memory and disk larger than the host has, as cpu
// above the host's cores is: such a limit could never be met.
func (m *Manager) checkHostFits(sp Spec) error {
	if total := hostMemory(); sp.MemoryBytes > 0 && total > 0 && sp.MemoryBytes > total {
		return invalid("memory %s exceeds the host's %s", gib(sp.MemoryBytes), gib(total))
	}
	if total := m.hostDisk(); sp.DiskBytes > 0 && total > 0 && sp.DiskBytes > total {
		return invalid("disk %s exceeds the %s of the file system that holds sandboxes", gib(sp.DiskBytes), gib(total))
	}
	return nil
}

// gib writes a size in GiB with one decimal, or in MiB below 1 GiB.
func gib(n int64) string {
	if n < 1<<30 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
