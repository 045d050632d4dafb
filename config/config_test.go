package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// env is a getenv over a map.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// Parse reads flags over the environment it is given (no process state),
// a flag beats its variable, and a bad variable is an error naming it.
func TestParseEnvFallbacks(t *testing.T) {
	vars := map[string]string{"BULLPEN_DATA": "/srv/bp", "BULLPEN_ADDR": "0.0.0.0:9", "BULLPEN_SANDBOXES": "off", "BULLPEN_LOG_FORMAT": "json"}
	var c Config
	if err := c.Parse("serve", []string{"--addr", "127.0.0.1:0", "--shared-database"}, env(vars)); err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/srv/bp" || c.Addr != "127.0.0.1:0" || c.SandboxesOn || !c.SharedDatabase || c.Ops.LogFormat != "json" || c.AdminGiven {
		t.Fatalf("Parse = %+v", c)
	}
	if c.Shared() { // shared needs PostgreSQL
		t.Error("Shared() without a database URL")
	}
	for _, bad := range []map[string]string{{"BULLPEN_SHARED_DATABASE": "perhaps"}, {"BULLPEN_LOG_FORMAT": "xml"}} {
		var c Config
		err := c.Parse("serve", nil, env(bad))
		for k := range bad {
			if err == nil || (!strings.Contains(err.Error(), k) && !strings.Contains(err.Error(), "log-format")) {
				t.Errorf("Parse with %s=%q = %v, want an error naming it", k, bad[k], err)
			}
		}
	}
	var given Config
	if err := given.Parse("admin-token", nil, env(map[string]string{"BULLPEN_ADMIN": "ops"})); err != nil || !given.AdminGiven || given.AdminHandle != "ops" {
		t.Errorf("BULLPEN_ADMIN=ops: AdminGiven %v handle %q err %v", given.AdminGiven, given.AdminHandle, err)
	}
}

// The demo gets an office of its own under the default data directory,
// but never moves one the operator named.
func TestForDemo(t *testing.T) {
	getenv := env(map[string]string{"XDG_DATA_HOME": "/home/u/.data"})
	c := Config{DataDir: DefaultDataDir(getenv)}
	c.ForDemo(getenv)
	if want := filepath.Join("/home/u/.data", "bullpen", "demo"); c.DataDir != want {
		t.Errorf("default dir: DataDir = %q, want %q", c.DataDir, want)
	}
	for _, named := range []Config{{DataDir: "/srv/bp"}, {DataDir: DefaultDataDir(getenv), DatabaseURL: "postgres://db/bp"}} {
		before := named.DataDir
		named.ForDemo(getenv)
		if named.DataDir != before {
			t.Errorf("ForDemo moved %+v to %q", named, named.DataDir)
		}
	}
}

// `bullpen demo` is a demo in an office of its own; `serve` is neither.
func TestParseDemo(t *testing.T) {
	getenv := env(map[string]string{"XDG_DATA_HOME": "/home/u/.data"})
	var demo, serve Config
	if err := demo.Parse("demo", nil, getenv); err != nil {
		t.Fatal(err)
	}
	if err := serve.Parse("serve", nil, getenv); err != nil {
		t.Fatal(err)
	}
	if !demo.Demo || demo.DataDir != filepath.Join("/home/u/.data", "bullpen", "demo") {
		t.Errorf("demo: Demo %v, DataDir %q", demo.Demo, demo.DataDir)
	}
	if serve.Demo || serve.DataDir != filepath.Join("/home/u/.data", "bullpen") {
		t.Errorf("serve: Demo %v, DataDir %q", serve.Demo, serve.DataDir)
	}
}

// Placement is on only for shared PostgreSQL with local sandboxes: the
// kubernetes driver's workspaces are reached from every replica.
func TestPlacementOnlySharedAndLocal(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		want bool
	}{
		{"shared, local", map[string]string{"BULLPEN_DATABASE_URL": "postgres://x/y", "BULLPEN_SHARED_DATABASE": "on"}, true},
		{"shared, kubernetes", map[string]string{"BULLPEN_DATABASE_URL": "postgres://x/y", "BULLPEN_SHARED_DATABASE": "on", "BULLPEN_SANDBOX_RUNTIME": "kubernetes",
			"BULLPEN_KUBE_NAMESPACE": "sb", "BULLPEN_KUBE_INIT_IMAGE": "init:1"}, false},
		{"shared, no sandboxes", map[string]string{"BULLPEN_DATABASE_URL": "postgres://x/y", "BULLPEN_SHARED_DATABASE": "on", "BULLPEN_SANDBOXES": "off"}, false},
		{"not shared", map[string]string{"BULLPEN_DATABASE_URL": "postgres://x/y"}, false},
		{"SQLite", map[string]string{"BULLPEN_SHARED_DATABASE": "on"}, false},
	} {
		var c Config
		if err := c.Parse("serve", nil, env(tc.vars)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := c.Placement(); got != tc.want {
			t.Errorf("%s: Placement() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
