package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bullpen-hq/bullpen/sandbox/sbinit"
	"golang.org/x/sys/unix"
)

// errPooledDead is assignLocked's error when the pooled init had died
// before it was assigned: nothing of the sandbox ran, the caller may
// start an init of its own instead.
var errPooledDead = errors.New("sandbox: pooled init died before its assignment")

// assignLocked makes the pooled init of e (e.id == s.id) the init of the
// provisioned sandbox s, whose cgroups have its limits already (caller
// holds s.mu). On error e's init is killed; the caller destroys s.
func (m *Manager) assignLocked(ctx context.Context, s *sandbox, e *poolEntry) error {
	defer e.f.close()
	defer os.Remove(e.logPath) // if not moved into s.dir
	return m.attachInit(s, e.p, func() error {
		defer e.st.close()
		if err := os.WriteFile(filepath.Join(s.dir, initKeyFile), []byte(e.p.key), 0o600); err != nil {
			return fmt.Errorf("sandbox: init key: %w", err)
		}
		logPath := filepath.Join(s.dir, "init.log")
		if err := os.Rename(e.logPath, logPath); err != nil {
			return fmt.Errorf("sandbox: init log: %w", err)
		}
		e.st.logPath, e.st.ctx = logPath, ctx
		e.st.timer.Reset(initReadyTimeout)
		// Init kept the host's open files limit while pooled: lowering
		// it to the sandbox's needs no CAP_SYS_RESOURCE, raising would.
		if err := m.setNoFile(e.p.pid, s.meta.NoFile); err != nil {
			if errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("%w: %w", errPooledDead, err)
			}
			return err
		}
		if _, err := e.f.goW.Write(sbinit.Assignment(s.id, s.hostname(), s.meta.HostBase)); err != nil {
			if errors.Is(err, unix.EPIPE) { // it died while pooled
				return fmt.Errorf("%w: %w", errPooledDead, err)
			}
			return fmt.Errorf("sandbox: assign pooled init: %w", err)
		}
		if err := e.st.ready(); errors.Is(err, errInitExited) {
			// It died while pooled, or on reading the assignment: in its
			// own namespaces, before anything of the sandbox ran.
			return fmt.Errorf("%w: %w", errPooledDead, err)
		} else if err != nil {
			return err
		}
		return nil
	})
}
