package main

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// ParseFlags hands env and flags to the packages that own them (their
// own tests cover every value), and an owner's refusal stops it.
func TestParseFlagsWiresOwners(t *testing.T) {
	t.Setenv("BULLPEN_SANDBOX_DEFAULT_LIFETIME", "2h")
	t.Setenv("BULLPEN_AUTH_FAILURES", "3")
	m := NewMain(io.Discard, io.Discard)
	if err := m.ParseFlags("serve", []string{"--agent-sandbox-idle", "1m", "--auth-window", "30s"}); err != nil {
		t.Fatal(err)
	}
	if m.SandboxTimes.DefaultLifetime != 2*time.Hour || m.SandboxTimes.AgentIdle != time.Minute {
		t.Errorf("SandboxTimes = %+v, want lifetime 2h idle 1m", m.SandboxTimes)
	}
	if m.Auth.Failures != 3 || m.Auth.Window != 30*time.Second {
		t.Errorf("Auth = %+v, want failures 3 window 30s", m.Auth)
	}
	for _, env := range []string{"BULLPEN_AGENT_SANDBOX_IDLE", "BULLPEN_AUTH_FAILURES"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "not a value")
			if err := NewMain(io.Discard, io.Discard).ParseFlags("serve", nil); err == nil {
				t.Fatalf("ParseFlags with %s malformed = nil, want an error", env)
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
