package web_test

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/web"
)

// TestSandboxNetworkAndDurationShapes creates sandboxes with the shapes
// docs/sandboxes.md shows: network as "none" or "open" (or the allowlist object),
// durations as Go strings or seconds, answered in seconds.
func TestSandboxNetworkAndDurationShapes(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	var open struct {
		Network struct {
			Allow   []string `json:"allow"`
			Domains []string `json:"domains"`
		} `json:"network"`
		Timeout     float64 `json:"timeout"`
		IdleTimeout float64 `json:"idle_timeout"`
	}
	raw, _ := json.Marshal(map[string]any{"network": "open", "timeout": "1h", "idle_timeout": 90})
	if st := s.do("POST", "/api/v1/sandboxes", s.Token, raw, &open); st != 201 {
		t.Fatalf(`create with "network":"open" = %d`, st)
	}
	if len(open.Network.Allow) != 1 || open.Network.Allow[0] != "0.0.0.0/0" || open.Timeout != 3600 || open.IdleTimeout != 90 {
		t.Errorf(`"open", "1h", 90 gave network %+v, timeout %v, idle_timeout %v; want allow [0.0.0.0/0], 3600, 90`, open.Network, open.Timeout, open.IdleTimeout)
	}
	openBox := s.create(s.Token, map[string]any{"network": "open"})
	if out, _ := s.run(s.Token, openBox.ID, "ip route 2>/dev/null | grep -c default || true"); strings.TrimSpace(out) != "1" {
		t.Errorf(`"network":"open" sandbox has no default route: %q`, out)
	}
	none := s.create(s.Token, map[string]any{"network": "none", "timeout": "90m"})
	if none.Timeout != 5400 {
		t.Errorf(`timeout "90m" came back as %v, want 5400 (seconds)`, none.Timeout)
	}
	var got struct {
		Network map[string]any `json:"network"`
	}
	s.do("GET", "/api/v1/sandboxes/"+none.ID, s.Token, nil, &got)
	if len(got.Network) != 0 {
		t.Errorf(`"network":"none" gave %v, want no allowlist`, got.Network)
	}
	// What no network policy means, the sandbox sees: no route out.
	if out, code := s.run(s.Token, none.ID, "ip route 2>/dev/null | grep -c default || true"); code != 0 || strings.TrimSpace(out) != "0" {
		t.Errorf(`"network":"none" sandbox has a default route: %q (exit %d)`, out, code)
	}
	for _, bad := range []any{"closed", 7, []string{"open"}} {
		var e apiError
		raw, _ := json.Marshal(map[string]any{"network": bad})
		st := s.do("POST", "/api/v1/sandboxes", s.Token, raw, &e)
		if st != 400 || !strings.Contains(e.Error.Message, `"none", "open"`) {
			t.Errorf("network %v = %d %q, want 400 naming the accepted shapes", bad, st, e.Error.Message)
		}
	}
}

// TestRawUploadRefusesForms checks that a file upload or image import sent
// as a form (what curl -d does) gets a clear error naming the expected
// Content-Type, not a bare 413, and writes nothing.
func TestRawUploadRefusesForms(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.Token, map[string]any{})
	big := bytes.Repeat([]byte("a"), 2<<20) // over the 1 MiB body limit
	for _, tc := range []struct{ path, ctype string }{
		{"/api/v1/sandboxes/" + sb.ID + "/files?path=up.bin", "application/x-www-form-urlencoded"},
		{"/api/v1/sandboxes/" + sb.ID + "/files?path=up.bin", "multipart/form-data; boundary=x"},
		{"/api/v1/images/import?name=formed", "application/x-www-form-urlencoded"},
	} {
		method := "PUT"
		if strings.Contains(tc.path, "images") {
			method = "POST"
		}
		resp := s.req(method, tc.path, s.Token, bytes.NewReader(big), tc.ctype)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e apiError
		json.Unmarshal(b, &e)
		if resp.StatusCode != 400 || e.Error.Code != "invalid" || !strings.Contains(e.Error.Message, "Content-Type: application/octet-stream") {
			t.Errorf("%s %s as %s = %d %s, want 400 naming application/octet-stream", method, tc.path, tc.ctype, resp.StatusCode, b)
		}
	}
	if st := s.do("GET", "/api/v1/sandboxes/"+sb.ID+"/files/stat?path=up.bin", s.Token, nil, nil); st != 404 {
		t.Errorf("after the refused uploads, stat up.bin = %d, want 404", st)
	}
	resp := s.req("PUT", "/api/v1/sandboxes/"+sb.ID+"/files?path=up.bin", s.Token, bytes.NewReader(big), "application/octet-stream")
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Errorf("the same upload as application/octet-stream = %d, want 201", resp.StatusCode)
	}
}
