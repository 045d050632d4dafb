package main

import (
	"os"
	"testing"

	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/web/openapi/openapitest"
)

// TestMain lets the test binary serve as the sandboxes' init, as main does.
func TestMain(m *testing.M) {
	sandbox.MaybeRunInit()
	os.Exit(openapitest.Main(m)) // every exchange checked against the OpenAPI document
}
