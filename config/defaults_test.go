package config_test

import (
	"testing"

	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/config"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/store"
)

// TestDefaultsAreThePackagesOwn: config declares the flags' defaults
// without importing the packages that use them, and those packages fall
// back to their own defaults when given none (a library caller, a
// test). The two must not drift apart.
func TestDefaultsAreThePackagesOwn(t *testing.T) {
	for _, tc := range []struct {
		name        string
		config, pkg int64
	}{
		{"turn retention", int64(config.DefaultTurnRetention), int64(agents.DefaultTurnRetention)},
		{"turn record cap", config.DefaultTurnCap, store.DefaultTurnCap},
		{"turn body cap", config.DefaultBodyCap, store.DefaultBodyCap},
		{"agent sandbox idle", int64(config.DefaultAgentIdle), int64(sandboxes.DefaultAgentIdle)},
	} {
		if tc.config != tc.pkg {
			t.Errorf("%s: config's default %d, the package's %d", tc.name, tc.config, tc.pkg)
		}
	}
}
