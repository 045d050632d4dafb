package openapitest_test

import (
	"testing"

	"github.com/bullpen-hq/bullpen/web/openapi/openapitest"
)

// TestDocumentLoads checks that the served document, fragments merged, is
// valid OpenAPI that kin-openapi can route.
func TestDocumentLoads(t *testing.T) {
	if _, err := openapitest.New(); err != nil {
		t.Fatal(err)
	}
}
