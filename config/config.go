// Package config reads the server's settings (bullpen serve, demo,
// migrate, admin-token, install-clis) from its command line, each flag
// falling back to an environment variable. Config gathers them into one
// flag set: its own settings and the groups beside it (SandboxTimes,
// AuthLimits, Recording, Ops), and the sandbox library's
// sandbox.Limits. It imports no service (TestDepsReachNoAgents): main
// hands the values to the packages that use them. docs/operations.md
// lists every flag and variable.
package config

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
)

// Config is the server's settings, as flags and environment give them.
type Config struct {
	DataDir     string
	DatabaseURL string
	Addr        string
	AdminHandle string
	// AdminGiven: --admin or BULLPEN_ADMIN was set.
	AdminGiven  bool
	OfficeName  string
	SandboxesOn bool
	// SharedDatabase: several processes run on one PostgreSQL database
	// and share the agents' work.
	SharedDatabase bool
	// MCPConformance adds the MCP conformance suite's fixtures to /mcp
	// (for TestMCPConformance; never in an office).
	MCPConformance bool
	// SandboxLimits are the operator's default sandbox limits.
	SandboxLimits sandbox.Limits
	// SandboxTimes are the operator's sandbox lifetime and idle defaults.
	SandboxTimes SandboxTimes
	// SandboxRuntime selects the sandbox driver (local or kubernetes).
	SandboxRuntime SandboxRuntime
	// Auth limits failed authentication per client address.
	Auth AuthLimits
	// Recording sets the turn inspector's retention and size caps.
	Recording Recording
	// Ops are the log format and the metrics token.
	Ops Ops
	// Demo runs every agent on the scripted simulation (bullpen demo, in
	// an office of its own: ForDemo); DemoPace bounds how long each
	// simulated answer takes (the program's default is 1–3 s, so a person
	// can follow; tests make it short).
	Demo     bool
	DemoPace [2]time.Duration
}

// AdminAsked is the admin handle --admin or BULLPEN_ADMIN named, or ""
// when neither was set (then the first admin is meant).
func (c *Config) AdminAsked() string {
	if c.AdminGiven {
		return c.AdminHandle
	}
	return ""
}

// Parse reads args (the flags of bullpen cmd), falling back to getenv's
// variables; a bad flag or variable is an error naming it.
func (c *Config) Parse(cmd string, args []string, getenv func(string) string) error {
	fs := flag.NewFlagSet("bullpen "+cmd, flag.ContinueOnError)
	fs.StringVar(&c.DataDir, "data", DefaultDataDir(getenv), "data directory (env BULLPEN_DATA)")
	fs.StringVar(&c.DatabaseURL, "database-url", envOr(getenv, "BULLPEN_DATABASE_URL", ""), "postgres:// URL; empty for SQLite in the data directory (env BULLPEN_DATABASE_URL)")
	fs.StringVar(&c.Addr, "addr", envOr(getenv, "BULLPEN_ADDR", "127.0.0.1:8080"), "listen address (env BULLPEN_ADDR)")
	fs.StringVar(&c.AdminHandle, "admin", envOr(getenv, "BULLPEN_ADMIN", "admin"), "handle of the first admin, created at first start")
	fs.StringVar(&c.OfficeName, "name", envOr(getenv, "BULLPEN_NAME", "Bullpen"), "office name shown in the dashboard")
	checks := []func() error{
		onOffVar(fs, getenv, &c.SandboxesOn, "sandboxes", "BULLPEN_SANDBOXES", true, "on or off: run sandboxes (they need root) (env BULLPEN_SANDBOXES)"),
		c.SandboxTimes.RegisterFlags(fs, getenv), c.SandboxRuntime.RegisterFlags(fs, getenv), c.Auth.RegisterFlags(fs, getenv), c.SandboxLimits.RegisterFlags(fs, getenv), c.Recording.RegisterFlags(fs, getenv),
		onOffVar(fs, getenv, &c.SharedDatabase, "shared-database", "BULLPEN_SHARED_DATABASE", false, "on or off: several processes share one PostgreSQL database and its agents' work (env BULLPEN_SHARED_DATABASE)"),
		onOffVar(fs, getenv, &c.MCPConformance, "mcp-conformance", "BULLPEN_MCP_CONFORMANCE", false, "on or off: add the MCP conformance suite's test tools, resources and prompts to /mcp, for running the suite only (env BULLPEN_MCP_CONFORMANCE)"),
		c.Ops.RegisterFlags(fs, getenv)}
	if err := fs.Parse(args); err != nil {
		return err
	}
	fs.Visit(func(f *flag.Flag) { c.AdminGiven = c.AdminGiven || f.Name == "admin" })
	c.AdminGiven = c.AdminGiven || getenv("BULLPEN_ADMIN") != ""
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if cmd == "demo" {
		c.Demo = true
		c.ForDemo(getenv)
	}
	return nil
}

// Shared says whether this process shares its database and the agents'
// work with others: --shared-database on PostgreSQL.
func (c *Config) Shared() bool { return c.SharedDatabase && c.DatabaseURL != "" }

// Placement says whether each agent's turns must run on the replica that
// holds its workspace: shared, with the local sandbox driver, whose
// workspaces are on each replica's own disk (the kubernetes driver's are
// reached from every replica).
func (c *Config) Placement() bool {
	return c.Shared() && c.SandboxesOn && c.SandboxRuntime.Runtime == RuntimeLocal
}

// Where says where the data is: PostgreSQL or the data directory.
func (c *Config) Where() string {
	if c.DatabaseURL != "" {
		return "PostgreSQL"
	}
	return c.DataDir
}

// ForDemo gives bullpen demo an office of its own: <data dir>/demo,
// unless a data directory other than the default or a database was given.
func (c *Config) ForDemo(getenv func(string) string) {
	if c.DataDir == DefaultDataDir(getenv) && c.DatabaseURL == "" {
		c.DataDir = filepath.Join(c.DataDir, "demo")
	}
}

// DefaultDataDir is $BULLPEN_DATA, else the XDG data directory.
func DefaultDataDir(getenv func(string) string) string {
	if d := getenv("BULLPEN_DATA"); d != "" {
		return d
	}
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "bullpen")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "bullpen")
	}
	return "bullpen-data"
}

// envOr is getenv's value of name, or def when it is unset or empty.
func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}
