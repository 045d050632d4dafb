package kubernetes_test

import (
	"testing"

	"github.com/bullpen-hq/bullpen/config"
)

// checkFlags parses the Deployment's args as `bullpen serve` does, so a
// misspelt or removed flag fails here rather than in a crash-looping pod.
func checkFlags(t *testing.T, args []string) {
	t.Helper()
	if len(args) == 0 || args[0] != "serve" {
		t.Fatalf("args %v: want the serve command first", args)
	}
	var c config.Config
	if err := c.Parse("serve", args[1:], func(string) string { return "" }); err != nil {
		t.Errorf("bullpen serve %v: %v", args[1:], err)
	}
	if !c.SharedDatabase {
		t.Errorf("args %v do not turn the shared database on", args)
	}
}
