package sandbox

import (
	"context"
	"path"
	"path/filepath"
	"slices"
)

// Attach replaces a sandbox's Mounts and Bridges (an agent's workspace that
// switches to a CLI runtime needs the CLIs and the bridge to Bullpen). The
// same ones again is a no-op. Otherwise a running or paused sandbox is
// stopped and started again: a mount cannot enter a running init's mount
// namespace. Its processes end; its files are kept.
func (m *Manager) Attach(ctx context.Context, id string, mounts []Mount, bridges []Bridge) error {
	if err := checkMounts(mounts, m.cfg.StateDir, m.runDir); err != nil {
		return err
	}
	var restarted bool
	var sid string
	err := m.withSandbox(id, func(s *sandbox) error {
		if err := checkBridges(bridges, portsOf(s)); err != nil {
			return err
		}
		if slices.Equal(s.meta.Mounts, mounts) && slices.Equal(s.meta.Bridges, bridges) {
			return nil
		}
		sid = s.id
		running := s.meta.State == StateRunning || s.meta.State == StatePaused
		if running {
			if err := m.stopLocked(s); err != nil {
				return err
			}
			s.meta.State = StateStopped
		}
		if err := m.mnt.do(func() error {
			for _, mt := range s.meta.Mounts {
				if err := unmountAll(filepath.Join(s.rootfs, path.Clean(mt.Path))); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
		s.meta.Mounts = append([]Mount(nil), mounts...)
		s.meta.Bridges = append([]Bridge(nil), bridges...)
		if err := s.saveMeta(); err != nil || !running {
			return err
		}
		restarted = true
		return m.restartLocked(ctx, s)
	})
	if restarted {
		m.emit(EventStopped, sid, "attach")
		if err == nil {
			m.emit(EventStarted, sid, "attach")
		}
	}
	return err
}

// restartLocked boots a stopped sandbox, as Start does (caller holds s.mu).
func (m *Manager) restartLocked(ctx context.Context, s *sandbox) error {
	if err := m.mnt.do(func() error {
		if err := m.mountRootfs(s); err != nil {
			return err
		}
		return m.prepareRootfs(s)
	}); err != nil {
		return err
	}
	if err := m.startLocked(ctx, s, false); err != nil {
		return err
	}
	s.meta.State = StateRunning
	return s.saveMeta()
}

func portsOf(s *sandbox) []int {
	out := make([]int, 0, len(s.ports))
	for p := range s.ports {
		out = append(out, p)
	}
	return out
}
