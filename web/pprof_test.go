package web_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/web"
)

// TestProfilesOperatorOnly: /debug/pprof/ answers loopback clients and
// those with the metrics token, and refuses a client that is not on
// loopback (seen through a trusted proxy) without it, with a wrong one,
// or when the operator set no token; a session user's API token is not
// the metrics token.
func TestProfilesOperatorOnly(t *testing.T) {
	get := func(ts *testServer, path string, header map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	ts := newServer(t, web.Config{TrustedProxies: []string{"127.0.0.1"}, MetricsToken: "s3cret-metrics"})
	if st, body := get(ts, "/debug/pprof/", nil); st != 200 || !strings.Contains(body, "goroutine") {
		t.Errorf("profile index from loopback = %d, want 200 listing goroutine: %.200s", st, body)
	}
	if st, body := get(ts, "/debug/pprof/heap?debug=1", nil); st != 200 || !strings.Contains(body, "heap profile") {
		t.Errorf("heap profile from loopback = %d: %.200s", st, body)
	}
	remote := "203.0.113.9"
	for name, h := range map[string]map[string]string{
		"no token":       {"X-Forwarded-For": remote},
		"wrong token":    {"X-Forwarded-For": remote, "Authorization": "Bearer wrong"},
		"a user's token": {"X-Forwarded-For": remote, "Authorization": "Bearer " + ts.Token},
	} {
		for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=2", "/debug/pprof/cmdline", "/debug/pprof/profile?seconds=1"} {
			if st, body := get(ts, path, h); st != 403 || strings.Contains(body, "goroutine ") {
				t.Errorf("%s from a remote client with %s = %d, want 403: %.200s", path, name, st, body)
			}
		}
	}
	if st, body := get(ts, "/debug/pprof/goroutine?debug=1", map[string]string{"X-Forwarded-For": remote,
		"Authorization": "Bearer s3cret-metrics"}); st != 200 || !strings.Contains(body, "goroutine profile") {
		t.Errorf("goroutines with the metrics token = %d: %.200s", st, body)
	}
	// Without a metrics token, only loopback reads profiles.
	open := newServer(t, web.Config{TrustedProxies: []string{"127.0.0.1"}})
	if st, _ := get(open, "/debug/pprof/", map[string]string{"X-Forwarded-For": remote, "Authorization": "Bearer "}); st != 403 {
		t.Errorf("profiles from a remote client on a server without a metrics token = %d, want 403", st)
	}
}
