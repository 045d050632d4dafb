package main

import (
	"os"
	"testing"

	"github.com/bullpen-hq/bullpen/sandbox"
)

// TestMain lets the test binary serve as the sandboxes' init, as main does.
func TestMain(m *testing.M) {
	sandbox.MaybeRunInit()
	os.Exit(m.Run())
}
