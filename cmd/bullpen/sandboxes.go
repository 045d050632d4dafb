package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

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
		Office:          m.Office,
		Sandbox:         cfg,
		Images:          images,
		DefaultLifetime: m.SandboxTimes.DefaultLifetime,
		Logger:          m.Logger,
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

// SandboxTimes are the operator's defaults for how long sandboxes live.
type SandboxTimes struct {
	// DefaultLifetime is the lifetime of a sandbox created through the API
	// whose request sets none.
	DefaultLifetime time.Duration
	// AgentIdle is how long an agent's workspace may idle before it is
	// stopped (its next sandbox tool call starts it again).
	AgentIdle time.Duration
}

// flags registers the sandbox time flags, defaulting to their env.
func (t *SandboxTimes) flags(fs *flag.FlagSet) {
	fs.DurationVar(&t.DefaultLifetime, "sandbox-default-lifetime", envDuration("BULLPEN_SANDBOX_DEFAULT_LIFETIME", 24*time.Hour),
		"lifetime of API-created sandboxes whose request sets no timeout (env BULLPEN_SANDBOX_DEFAULT_LIFETIME)")
	fs.DurationVar(&t.AgentIdle, "agent-sandbox-idle", envDuration("BULLPEN_AGENT_SANDBOX_IDLE", sandboxes.DefaultAgentIdle),
		"idle time after which an agent's sandbox is stopped (env BULLPEN_AGENT_SANDBOX_IDLE)")
}

// check refuses durations the sandboxes cannot use.
func (t *SandboxTimes) check() error {
	for _, env := range []string{"BULLPEN_SANDBOX_DEFAULT_LIFETIME", "BULLPEN_AGENT_SANDBOX_IDLE"} {
		if v := os.Getenv(env); v != "" {
			if _, err := time.ParseDuration(v); err != nil {
				return fmt.Errorf("%s=%q is not a duration like 24h or 10m", env, v)
			}
		}
	}
	if t.DefaultLifetime < time.Second || t.AgentIdle < time.Second {
		return fmt.Errorf("--sandbox-default-lifetime and --agent-sandbox-idle must be at least 1s")
	}
	return nil
}

// envDuration parses a duration from the environment, def when unset (a
// malformed value is refused by check).
func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}
