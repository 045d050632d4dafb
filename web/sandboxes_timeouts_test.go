package web_test

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/web"
)

// stateOf is a sandbox's state as its owner sees it ("gone" once it is
// terminated, whether still found by id or not).
func (s *sbServer) stateOf(token, id string) string {
	var v sbView
	if st := s.do("GET", "/api/v1/sandboxes/"+id, token, nil, &v); st == 404 || v.State == "terminated" {
		return "gone"
	}
	return v.State
}

// Property 7: pausing does not stop the idle clock. A paused sandbox past
// its idle timeout is stopped (idle_action stop) or terminated
// (terminate), and so is one paused while a command runs in it.
func TestSandboxIdleTimeoutAppliesWhenPaused(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	tests := []struct {
		name, action, want string
		busy               bool
	}{
		{name: "paused, stop", action: "stop", want: "stopped"},
		{name: "paused, terminate", action: "terminate", want: "gone"},
		{name: "paused with a command running", action: "stop", want: "stopped", busy: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := s.create(s.BobToken, map[string]any{"idle_timeout": 1, "idle_action": tt.action, "memory": "64Mi"})
			if tt.busy {
				resp := s.req("POST", "/api/v1/sandboxes/"+sb.ID+"/exec", s.BobToken, strings.NewReader(`{"cmd":"sleep 600"}`), "application/json")
				defer resp.Body.Close()
				if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || resp.StatusCode != 200 {
					t.Fatalf("exec: %d %v", resp.StatusCode, err)
				}
			}
			if st := s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/pause", s.BobToken, nil, nil); st != 200 {
				t.Fatalf("pause: %d", st)
			}
			waitUntil(t, func() bool { return s.stateOf(s.BobToken, sb.ID) == tt.want })
			if tt.want == "stopped" {
				s.do("DELETE", "/api/v1/sandboxes/"+sb.ID, s.BobToken, nil, nil)
			}
		})
	}
	// With idle_action pause, a paused sandbox stays paused: that is
	// where its policy puts idle sandboxes anyway.
	sb := s.create(s.BobToken, map[string]any{"idle_timeout": 1, "idle_action": "pause", "memory": "64Mi"})
	waitUntil(t, func() bool { return s.stateOf(s.BobToken, sb.ID) == "paused" })
	time.Sleep(1500 * time.Millisecond) // several idle checks; a wrong stop would show
	if got := s.stateOf(s.BobToken, sb.ID); got != "paused" {
		t.Errorf("idle_action pause: state %s after idling while paused, want paused", got)
	}
}

// Property 7: a sandbox created through the API without a timeout gets the
// operator's default lifetime and is terminated after it; a request's own
// timeout wins. Agents' workspaces (Ensure) get none.
func TestSandboxDefaultLifetime(t *testing.T) {
	s := newSandboxServerWith(t, web.Config{}, sandboxes.Config{DefaultLifetime: 2 * time.Second}, nil)
	short := s.create(s.BobToken, map[string]any{"memory": "64Mi"})
	if short.Timeout != 2 {
		t.Errorf("timeout of a sandbox created without one = %vs, want the default 2s", short.Timeout)
	}
	long := s.create(s.BobToken, map[string]any{"memory": "64Mi", "timeout": 3600})
	if long.Timeout != 3600 {
		t.Errorf("timeout of a sandbox created with 3600s = %vs", long.Timeout)
	}
	agent, _ := s.addMember("robo", true)
	ws, err := s.Svc.Ensure(context.Background(), agent, sandbox.Spec{MemoryBytes: 64 << 20})
	if err != nil || ws.Timeout != 0 {
		t.Errorf("agent workspace timeout = %v, %v; want none", ws.Timeout, err)
	}
	waitUntil(t, func() bool { return s.stateOf(s.BobToken, short.ID) == "gone" })
	if got := s.stateOf(s.BobToken, long.ID); got != "running" {
		t.Errorf("sandbox with its own 1h timeout is %s, want running", got)
	}
}
