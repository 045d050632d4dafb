package sandbox

import (
	"context"
	"maps"
	"slices"
)

// SetNetwork replaces a sandbox's network policy (an agent's workspace
// whose network a human approved, or whose approval a policy change
// voided). The same policy again is a no-op. Otherwise a running or
// paused sandbox is stopped and started again under the new rules: its
// processes end; its files are kept.
func (m *Manager) SetNetwork(ctx context.Context, id string, p NetworkPolicy) error {
	allowed, hosts, err := m.resolveNetwork(ctx, p)
	if err != nil {
		return err
	}
	var restarted bool
	var sid string
	err = m.withSandbox(id, func(s *sandbox) error {
		if slices.Equal(s.meta.Allowed, allowed) && maps.EqualFunc(s.meta.Hosts, hosts, slices.Equal) {
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
		if len(allowed) == 0 && s.meta.NetIndex >= 0 {
			m.net.release(s.meta.NetIndex)
			s.meta.NetIndex = -1
		}
		s.meta.Network, s.meta.Allowed, s.meta.Hosts = p, allowed, hosts
		if err := s.saveMeta(); err != nil || !running {
			return err
		}
		restarted = true
		return m.restartLocked(ctx, s)
	})
	if restarted {
		m.emit(EventStopped, sid, "network")
		if err == nil {
			m.emit(EventStarted, sid, "network")
		}
	}
	return err
}
