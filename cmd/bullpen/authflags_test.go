package main

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// The auth limits come from flags or env; malformed values are refused.
func TestAuthLimitFlags(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		failures int
		window   time.Duration
		wantErr  bool
	}{
		{name: "defaults", failures: 10, window: time.Minute},
		{name: "env", env: map[string]string{"BULLPEN_AUTH_FAILURES": "3", "BULLPEN_AUTH_WINDOW": "30s"}, failures: 3, window: 30 * time.Second},
		{name: "flags win", env: map[string]string{"BULLPEN_AUTH_FAILURES": "3"}, args: []string{"--auth-failures", "-1"}, failures: -1, window: time.Minute},
		{name: "malformed env", env: map[string]string{"BULLPEN_AUTH_FAILURES": "many"}, wantErr: true},
		{name: "zero failures", args: []string{"--auth-failures", "0"}, wantErr: true},
		{name: "bad proxy", args: []string{"--trusted-proxies", "10.0.0.1,not-an-ip"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			m := NewMain(io.Discard, io.Discard)
			err := m.ParseFlags("serve", tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseFlags(%v) = %v, want error %v", tt.args, err, tt.wantErr)
			}
			if !tt.wantErr && (m.Auth.Failures != tt.failures || m.Auth.Window != tt.window) {
				t.Errorf("Auth = %+v, want failures %d window %v", m.Auth, tt.failures, tt.window)
			}
		})
	}
}

// BULLPEN_AUTH_FAILURES reaches the running server: the third bad token
// from one address is refused with 429 and Retry-After.
func TestAuthLimitReachesServer(t *testing.T) {
	t.Setenv("BULLPEN_AUTH_FAILURES", "2")
	t.Setenv("BULLPEN_SANDBOXES", "off")
	m, _ := startMain(t, t.TempDir())
	defer m.Close(context.Background())
	var codes []int
	for i := 0; i < 3; i++ {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", m.URL()+"api/v1/me", nil)
		req.Header.Set("Authorization", "Bearer bp_wrong")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		if i == 2 && resp.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	}
	if codes[0] != 401 || codes[1] != 401 || codes[2] != 429 {
		t.Errorf("statuses = %v, want [401 401 429]", codes)
	}
}
