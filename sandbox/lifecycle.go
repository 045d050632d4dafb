package sandbox

import (
	"context"

	bullpen "github.com/bullpen-hq/bullpen"
)

// withSandbox locks a live sandbox and runs fn.
func (m *Manager) withSandbox(id string, fn func(s *sandbox) error) error {
	s, err := m.lookup(id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.meta.State == StateTerminated || s.meta.State == stateCreating {
		return bullpen.Errorf(bullpen.ENOTFOUND, "sandbox %q not found", id)
	}
	return fn(s)
}

func conflict(s *sandbox, op string) error {
	return bullpen.Errorf(bullpen.ECONFLICT, "cannot %s sandbox %s: it is %s", op, s.id, s.meta.State)
}

// Pause freezes every process of a running sandbox (cgroup freezer);
// memory is kept. Exec is refused while paused; the file API still works.
func (m *Manager) Pause(ctx context.Context, id string) error {
	var sid string
	err := m.withSandbox(id, func(s *sandbox) error {
		if s.meta.State != StateRunning {
			return conflict(s, "pause")
		}
		if err := m.cg.freeze(s.id, true); err != nil {
			_ = m.cg.freeze(s.id, false)
			return err
		}
		s.meta.State = StatePaused
		sid = s.id
		return s.saveMeta()
	})
	if err == nil {
		m.emit(EventPaused, sid, "")
	}
	return err
}

// Resume thaws a paused sandbox.
func (m *Manager) Resume(ctx context.Context, id string) error {
	var sid string
	err := m.withSandbox(id, func(s *sandbox) error {
		if s.meta.State != StatePaused {
			return conflict(s, "resume")
		}
		if err := m.cg.freeze(s.id, false); err != nil {
			return err
		}
		s.meta.State = StateRunning
		s.touch(m.now())
		sid = s.id
		return s.saveMeta()
	})
	if err == nil {
		m.emit(EventResumed, sid, "")
	}
	return err
}

// Stop ends every process of a running or paused sandbox; its filesystem
// is kept and Start boots it again. Stopping a stopped sandbox is a no-op.
func (m *Manager) Stop(ctx context.Context, id string) error {
	var sid string
	err := m.withSandbox(id, func(s *sandbox) error {
		if s.meta.State == StateStopped {
			return nil
		}
		if err := m.stopLocked(s); err != nil {
			return err
		}
		s.meta.State = StateStopped
		sid = s.id
		return s.saveMeta()
	})
	if err == nil && sid != "" {
		m.emit(EventStopped, sid, "")
	}
	return err
}

// Start boots a stopped sandbox again on its kept filesystem, with the same
// limits, env, secrets, network policy and published ports.
func (m *Manager) Start(ctx context.Context, id string) error {
	var sid string
	err := m.withSandbox(id, func(s *sandbox) error {
		if s.meta.State != StateStopped {
			return conflict(s, "start")
		}
		// As in Create: the cgroups (kept by Stop; their limits set
		// again) do not depend on the filesystem.
		cgErr := make(chan error, 1)
		go func(id string, cpu float64, mem, pids int64) { cgErr <- m.cg.create(id, cpu, mem, pids) }(s.id, s.meta.CPU, s.meta.MemoryBytes, s.meta.Pids)
		err := m.mnt.do(func() error {
			if err := m.mountRootfs(s); err != nil {
				return err
			}
			return m.prepareRootfs(s)
		})
		if cerr := <-cgErr; err == nil {
			err = cerr
		}
		if err == nil {
			err = m.startLocked(ctx, s, true)
		}
		if err != nil {
			return err
		}
		s.meta.State = StateRunning
		sid = s.id
		return s.saveMeta()
	})
	if err == nil {
		m.emit(EventStarted, sid, "")
	}
	return err
}

// Terminate ends a sandbox and removes everything it had: processes,
// cgroups, network, mounts, files and published ports.
func (m *Manager) Terminate(ctx context.Context, id string) error {
	s, err := m.lookup(id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.meta.State == StateTerminated || s.meta.State == stateCreating {
		s.mu.Unlock()
		return bullpen.Errorf(bullpen.ENOTFOUND, "sandbox %q not found", id)
	}
	err = m.destroyLocked(s)
	info := s.info()
	s.mu.Unlock()
	m.mu.Lock()
	delete(m.sbs, s.id)
	if len(m.tombs) >= 1000 {
		for k := range m.tombs {
			delete(m.tombs, k)
			break
		}
	}
	m.tombs[s.id] = info
	m.mu.Unlock()
	m.emit(EventTerminated, s.id, "")
	return err
}

// Stats returns the sandbox's current resource usage (zero when stopped).
func (m *Manager) Stats(ctx context.Context, id string) (Usage, error) {
	var u Usage
	err := m.withSandbox(id, func(s *sandbox) error {
		if s.meta.State == StateStopped {
			return nil
		}
		var err error
		u, err = m.cg.usage(s.id)
		return err
	})
	return u, err
}

// SnapshotMemory would checkpoint a sandbox's processes and memory. CRIU
// does not work on this kind of host, so it always fails with EUNSUPPORTED;
// use Pause (memory kept while the host runs) or Snapshot (filesystem).
func (m *Manager) SnapshotMemory(ctx context.Context, id string) error {
	if _, err := m.lookup(id); err != nil {
		return err
	}
	return bullpen.Errorf(bullpen.EUNSUPPORTED, "memory snapshots need CRIU, which does not work on this host; use Pause or a filesystem Snapshot")
}
