package metrics_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOnlyMainImportsMetrics keeps the packages depending downward: the
// metrics read from them through functions main hands over, so no
// package of the module but cmd/bullpen may import metrics, and metrics
// imports none of the module's packages.
func TestOnlyMainImportsMetrics(t *testing.T) {
	const self = "github.com/bullpen-hq/bullpen/metrics"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "github.com/bullpen-hq/bullpen/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		seen++
		for _, imp := range f[1:] {
			if imp == self && f[0] != "github.com/bullpen-hq/bullpen/cmd/bullpen" {
				t.Errorf("%s imports %s; only main may", f[0], self)
			}
			if f[0] == self && strings.HasPrefix(imp, "github.com/bullpen-hq/bullpen") {
				t.Errorf("metrics imports %s; it reads through the functions in Sources instead", imp)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("go list named only %d packages:\n%s", seen, out)
	}
}
