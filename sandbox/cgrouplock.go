package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Moving a process into a cgroup (each sandbox's init, at every start)
// takes the kernel's cgroup_threadgroup_rwsem for writing. In its default
// mode that lock is a per-CPU rwsem whose writer waits for an RCU grace
// period: several milliseconds on a busy host, paid again whenever the
// last move was longer ago than one grace period (which made a create
// every 200 ms slower than back-to-back ones). With the "favordynmods"
// cgroup mount option the kernel keeps the lock in its slow-reader mode,
// so moves cost microseconds and forks and exits a little more (the cost
// the kernel documents for the option). The option is global to the
// lock, whichever hierarchy carries it, and cgroup v1 refuses to change
// it on a mounted hierarchy: so the Manager mounts an empty named v1
// hierarchy with it for its lifetime and unmounts it at Close. On hosts
// without cgroup v1 support the mount fails and nothing changes.

// fdmName is the named (controller-less) v1 hierarchy that carries the
// option.
const fdmName = "bullpen-favordynmods"

// favorDynMods mounts the named hierarchy at dir and returns dir, or ""
// when the host cannot (the figures are then slower, nothing else).
func favorDynMods(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("sandbox: cgroup lock mode: %w", err)
	}
	if isMounted(dir) {
		return dir, nil // left by a process that did not close
	}
	err := unix.Mount("cgroup", dir, "cgroup", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "none,name="+fdmName+",favordynmods")
	if err != nil {
		os.Remove(dir)
		return "", fmt.Errorf("sandbox: cgroup lock mode (favordynmods): %w", err)
	}
	return dir, nil
}

// unfavorDynMods unmounts what favorDynMods mounted. The kernel drops
// the option once no mount of the hierarchy is left (another Manager's
// mount keeps it).
func unfavorDynMods(dir string) error {
	if dir == "" {
		return nil
	}
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("sandbox: unmount %s: %w", filepath.Base(dir), err)
	}
	os.Remove(dir)
	return nil
}
