package web_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/web/openapi"
)

// specRoutes maps "METHOD /path" of every operation in the served spec,
// with {name} parameters written as {}, to the operation as written.
func specRoutes(t *testing.T) map[string]string {
	t.Helper()
	raw, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for p, item := range doc.Paths {
		for m := range item {
			switch m {
			case "get", "put", "post", "delete", "patch":
				out[strings.ToUpper(m)+" "+specParam.ReplaceAllString(p, "{}")] = strings.ToUpper(m) + " " + p
			}
		}
	}
	return out
}

var (
	specParam  = regexp.MustCompile(`\{[^}]+\}`)
	fiberParam = regexp.MustCompile(`:[A-Za-z0-9_]+`)
)

// describedByServer tells whether the spec describes a route's path: the
// API, the health check, the metrics, the MCP endpoint and the E2B surface.
func describedByServer(p string) bool {
	return strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/e2b/") || p == "/healthz" || p == "/metrics" || p == "/mcp"
}

// serverRoutes maps "METHOD /path" of every API route in Fiber's table,
// with :name parameters written as {}, to the route as registered. A
// trailing * (image names hold slashes) stays.
func serverRoutes(srv *web.Server) map[string]string {
	out := map[string]string{}
	for _, r := range srv.App().GetRoutes(true) {
		if r.Method == http.MethodHead || r.Method == http.MethodConnect || r.Method == http.MethodOptions ||
			r.Method == http.MethodTrace || !describedByServer(r.Path) {
			continue
		}
		out[r.Method+" "+fiberParam.ReplaceAllString(r.Path, "{}")] = r.Method + " " + r.Path
	}
	return out
}

// wildcardCovers tells whether a server route ending in /* serves a spec
// route: same method, and the spec path continues the prefix with
// parameters in it.
func wildcardCovers(server, spec string) bool {
	prefix, ok := strings.CutSuffix(server, "*")
	return ok && strings.HasPrefix(spec, prefix) && strings.Contains(spec[len(prefix):], "{}")
}

// TestRoutesMatchSpec fails on any API route that the OpenAPI document
// does not describe, and on any operation in it that no route serves.
func TestRoutesMatchSpec(t *testing.T) {
	srv := web.New(web.Config{}, web.Services{})
	server, spec := serverRoutes(srv), specRoutes(t)
	var missing, stale []string
	for r := range server {
		if _, ok := spec[r]; ok || slices.ContainsFunc(keys(spec), func(s string) bool { return wildcardCovers(r, s) }) {
			continue
		}
		missing = append(missing, server[r])
	}
	for s := range spec {
		if _, ok := server[s]; ok || slices.ContainsFunc(keys(server), func(r string) bool { return wildcardCovers(r, s) }) {
			continue
		}
		stale = append(stale, spec[s])
	}
	slices.Sort(missing)
	slices.Sort(stale)
	for _, r := range missing {
		t.Errorf("route %s has no entry in web/openapi (openapi.yaml or fragments/)", r)
	}
	for _, s := range stale {
		t.Errorf("spec operation %s has no route in the server", s)
	}
	if len(server) < 50 {
		t.Errorf("only %d API routes found in Fiber's table; is the walk right?", len(server))
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
