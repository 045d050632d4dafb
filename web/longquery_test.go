package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web"
)

// TestOverLongQueryGetsJSON: a query string longer than the server reads
// is refused with the API's JSON error (too_large), not the dashboard's
// HTML page, on every API path.
func TestOverLongQueryGetsJSON(t *testing.T) {
	ts := newServer(t, web.Config{})
	long := strings.Repeat("x", 20000)
	for _, path := range []string{"/api/v1/events?kind=" + long, "/mcp?x=" + long, "/healthz?x=" + long} {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+ts.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e apiError
		if err := json.Unmarshal(raw, &e); err != nil || e.Error.Code != bullpen.ETOOLARGE || resp.StatusCode < 400 {
			t.Errorf("GET %s… = %d %s %.200q, want a JSON too_large error", path[:12], resp.StatusCode, resp.Header.Get("Content-Type"), raw)
		}
	}
}
