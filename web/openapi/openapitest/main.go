package openapitest

import (
	"fmt"
	"net/http"
	"os"
	"strings"
)

// Runner is what a test binary's TestMain has: *testing.M.
type Runner interface{ Run() int }

// Main runs the tests of m with every exchange through
// http.DefaultTransport (which http.DefaultClient and clients without a
// transport of their own use) validated against the document. A mismatch
// fails the request that met it, naming the path and the reason, and
// fails the run even if a test swallowed the error. Call it from TestMain:
// os.Exit(openapitest.Main(m)).
func Main(m Runner) int {
	v, err := New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	http.DefaultTransport = v.Transport(http.DefaultTransport)
	code := m.Run()
	fmt.Fprintf(os.Stderr, "openapitest: %d HTTP exchanges checked against the OpenAPI document; operations never exercised: %v\n",
		v.Checked(), v.Unexercised())
	if p := v.Problems(); len(p) > 0 {
		fmt.Fprintf(os.Stderr, "%d exchanges did not match the OpenAPI document (web/openapi):\n%s\n", len(p), strings.Join(p, "\n"))
		if code == 0 {
			code = 1
		}
	}
	return code
}
