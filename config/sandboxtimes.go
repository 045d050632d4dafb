package config

import (
	"flag"
	"fmt"
	"time"
)

// The sandbox times' defaults. DefaultAgentIdle is also what
// sandboxes.Workspaces falls back to (sandboxes.DefaultAgentIdle; a
// test keeps the two equal).
const (
	// DefaultSandboxLifetime is the lifetime of an API-created sandbox
	// whose request sets none, unless the operator says otherwise.
	DefaultSandboxLifetime = 24 * time.Hour
	// DefaultAgentIdle is how long an agent's workspace may idle before
	// it is stopped, unless the operator says otherwise.
	DefaultAgentIdle = 10 * time.Minute
)

// SandboxTimes are the operator's defaults for how long sandboxes live;
// main hands them to sandboxes.Config and Service.Workspaces.
type SandboxTimes struct {
	// DefaultLifetime is the lifetime of a sandbox created through the API
	// whose request sets none.
	DefaultLifetime time.Duration
	// AgentIdle is how long an agent's workspace may idle before it is
	// stopped (its next sandbox tool call starts it again).
	AgentIdle time.Duration
}

// timeEnv pairs each flag with the variable it falls back to.
var timeEnv = [...]struct{ flag, env string }{
	{"sandbox-default-lifetime", "BULLPEN_SANDBOX_DEFAULT_LIFETIME"},
	{"agent-sandbox-idle", "BULLPEN_AGENT_SANDBOX_IDLE"},
}

// RegisterFlags registers the time flags on fs, defaulting to their
// environment variables read through getenv. The caller parses fs, then
// calls the returned func: it refuses malformed environment values
// (naming the variable) and durations under a second.
func (t *SandboxTimes) RegisterFlags(fs *flag.FlagSet, getenv func(string) string) func() error {
	fs.DurationVar(&t.DefaultLifetime, timeEnv[0].flag, envDuration(getenv, timeEnv[0].env, DefaultSandboxLifetime),
		"lifetime of API-created sandboxes whose request sets no timeout (env "+timeEnv[0].env+")")
	fs.DurationVar(&t.AgentIdle, timeEnv[1].flag, envDuration(getenv, timeEnv[1].env, DefaultAgentIdle),
		"idle time after which an agent's sandbox is stopped (env "+timeEnv[1].env+")")
	return func() error { return t.check(getenv) }
}

// check refuses durations the sandboxes cannot use.
func (t *SandboxTimes) check(getenv func(string) string) error {
	for _, e := range timeEnv {
		if v := getenv(e.env); v != "" {
			if _, err := time.ParseDuration(v); err != nil {
				return fmt.Errorf("%s=%q is not a duration like 24h or 10m", e.env, v)
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
func envDuration(getenv func(string) string, name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(getenv(name)); err == nil {
		return d
	}
	return def
}
