package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/image"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/web"
)

// openSandboxes starts the sandbox runtime under DataDir/sandboxes, with
// OCI images in DataDir/images. Sandboxes need root; without it, or when
// the host lacks what they need, the server runs without them (their API
// answers "unavailable") and says why in the log.
func (m *Main) openSandboxes(ctx context.Context) {
	if !m.SandboxesOn {
		m.Logger.Info("sandboxes are turned off")
		return
	}
	if os.Geteuid() != 0 {
		m.Logger.Warn("sandboxes are unavailable: bullpen must run as root for them")
		return
	}
	images, err := image.Open(filepath.Join(m.DataDir, "images"))
	if err != nil {
		m.Logger.Error("sandboxes are unavailable", "err", err)
		return
	}
	cfg := sandbox.Config{StateDir: filepath.Join(m.DataDir, "sandboxes")}
	m.SandboxLimits.apply(&cfg)
	if cfg.DiskQuotaOff {
		m.Logger.Warn("sandbox disk quotas are off: sandboxes' writable layers are unbounded")
	}
	svc, err := sandboxes.Open(ctx, sandboxes.Config{
		Office:  m.Office,
		Sandbox: cfg,
		Images:  images,
		Logger:  m.Logger,
	})
	if err != nil {
		m.Logger.Error("sandboxes are unavailable", "err", err)
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

// SandboxManager returns the runtime's Manager, or nil when sandboxes are
// unavailable.
func (m *Main) SandboxManager() *sandbox.Manager {
	if m.Sandboxes == nil {
		return nil
	}
	return m.Sandboxes.Manager()
}
