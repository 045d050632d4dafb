package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/bullpen-hq/bullpen/e2b"
	"os"

	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/web"
)

// openSandboxes starts the sandbox runtime in DataDir. Without root, or
// when the host lacks what sandboxes need, the server runs without them
// (their API answers "unavailable") and says why in the log.
func (m *Main) openSandboxes(ctx context.Context) {
	if !m.SandboxesOn {
		m.Logger.Info("sandboxes are turned off")
		return
	}
	cfg := sandboxes.Config{Office: m.Office, DB: m.DB, DefaultLifetime: m.SandboxTimes.DefaultLifetime, Logger: m.Logger}
	m.SandboxLimits.Apply(&cfg.Sandbox)
	svc, err := sandboxes.OpenInDir(ctx, m.DataDir, os.Geteuid(), cfg)
	if errors.Is(err, sandboxes.ErrNeedsRoot) {
		m.Logger.Warn("sandboxes are unavailable: " + err.Error())
		m.sandboxesDown = "sandboxes need root"
		return
	}
	if err != nil {
		m.Logger.Error("sandboxes are unavailable", "err", err)
		m.sandboxesDown = "the sandbox runtime did not start; see the server log"
		return
	}
	m.Sandboxes = svc
}

// sandboxService is the web layer's view of the sandboxes: a nil interface
// (not a nil pointer in one) when there are none.
func (m *Main) sandboxService() web.Sandboxes {
	if m.Sandboxes == nil {
		return nil
	}
	return m.Sandboxes
}

// timedSandboxService is sandboxService with each API create timed for
// the metrics.
func (m *Main) timedSandboxService() web.Sandboxes {
	sb := m.sandboxService()
	if sb == nil || m.Metrics == nil {
		return sb
	}
	return timedSandboxes{Sandboxes: sb, observe: m.Metrics.ObserveSandboxCreate}
}

// sandboxReady checks that the sandbox runtime can still start sandboxes:
// its init binary is in place (an upgrade that removed it leaves running
// sandboxes alone but breaks every new one).
func (m *Main) sandboxReady(context.Context) error {
	p := m.Sandboxes.Manager().InitPath()
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("the sandbox init binary %s is missing", p)
	}
	return nil
}

// e2bService is the E2B-compatible API over the sandboxes (nil, not a nil
// pointer in the interface, without them).
func (m *Main) e2bService() web.E2B {
	if m.Sandboxes == nil {
		return nil
	}
	m.e2b = e2b.New(e2b.Config{Boxes: m.Sandboxes, Keys: m.Office, DefaultTimeout: m.SandboxTimes.DefaultLifetime, Logger: m.Logger})
	return m.e2b
}
