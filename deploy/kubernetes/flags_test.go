package kubernetes_test

import (
	"os"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/config"
)

// pendingFlags are flags the Deployment sets that the kubernetes sandbox
// driver (issue #26, part B) adds to config. Until config registers them,
// checkFlags sets them aside; once it does, it fails, so this list empties.
var pendingFlags = []string{}

// checkFlags parses the Deployment's args as `bullpen serve` does, so a
// misspelt or removed flag fails here rather than in a crash-looping pod.
func checkFlags(t *testing.T, args []string) {
	t.Helper()
	if len(args) == 0 || args[0] != "serve" {
		t.Fatalf("args %v: want the serve command first", args)
	}
	var known, pending []string
	for _, a := range args[1:] {
		if hasPrefixAny(a, pendingFlags...) {
			pending = append(pending, a)
			continue
		}
		known = append(known, a)
	}
	env := func(string) string { return "" }
	var c config.Config
	if err := c.Parse("serve", known, env); err != nil {
		t.Errorf("bullpen serve %v: %v", known, err)
	}
	for _, p := range pending {
		var c config.Config
		err := quietly(t, func() error { return c.Parse("serve", []string{p}, env) })
		if err == nil {
			t.Errorf("config now registers %s: take it out of pendingFlags", p)
		} else if !strings.Contains(err.Error(), "flag provided but not defined") {
			t.Errorf("bullpen serve %s: %v", p, err)
		}
	}
	if !c.SharedDatabase {
		t.Errorf("args %v do not turn the shared database on", args)
	}
}

// quietly runs f with os.Stderr on /dev/null: the flag package prints the
// whole usage with an unknown flag's error.
func quietly(t *testing.T, f func() error) error {
	t.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	saved := os.Stderr
	os.Stderr = null
	defer func() { os.Stderr = saved }()
	return f()
}
