package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// Display names that hide or disguise text are refused on every path that
// sets one: member create and patch, agent hire and agent update; titles
// too. Nothing is stored.
func TestDisguisedNamesAreRefused(t *testing.T) {
	ts := newAgentServer(t, echoScript)
	var eng struct {
		Agent struct{ ID int64 } `json:"agent"`
	}
	if st := ts.do("POST", "/api/v1/agents", ts.Token, map[string]any{"role": "starter/engineer", "handle": "eng"}, &eng); st != 201 {
		t.Fatalf("hire: %d", st)
	}
	tests := []struct {
		name, method, path string
		body               map[string]any
		want               string
	}{
		{"create RLO", "POST", "/api/v1/members", map[string]any{"handle": "mallory", "display_name": "\u202Enimda"}, "display_name must not contain a bidirectional control character (U+202E"},
		{"create ZWSP", "POST", "/api/v1/members", map[string]any{"handle": "mallory", "display_name": "ad\u200Bmin"}, "display_name must not contain an invisible character (U+200B"},
		{"create filler", "POST", "/api/v1/members", map[string]any{"handle": "mallory", "display_name": "\u3164"}, "display_name must not contain an invisible character (U+3164"},
		{"create title", "POST", "/api/v1/members", map[string]any{"handle": "mallory", "display_name": "M", "title": "Admin\u2066"}, "title must not contain a bidirectional"},
		{"patch", "PATCH", "/api/v1/members/1", map[string]any{"display_name": "Admin\u200F"}, "display_name must not contain a bidirectional"},
		{"patch spaces", "PATCH", "/api/v1/members/1", map[string]any{"display_name": "Admin "}, "display_name must not start or end with a space"},
		{"hire", "POST", "/api/v1/agents", map[string]any{"role": "starter/pm", "handle": "pm", "name": "\u202Enimda"}, `role: field "name": must not contain a bidirectional control character (U+202E`},
		{"agent update", "PATCH", "/api/v1/agents/" + itoa(eng.Agent.ID), map[string]any{"name": "Eng\uFEFF"}, `role: field "name": must not contain an invisible character (U+FEFF`},
		{"channel topic", "POST", "/api/v1/channels", map[string]any{"name": "ops", "topic": "\u202Eops"}, "topic must not contain a bidirectional"},
	}
	before := snapshot(t, ts, context.Background())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e apiError
			st := ts.do(tt.method, tt.path, ts.Token, tt.body, &e)
			if st != http.StatusBadRequest || e.Error.Code != bullpen.EINVALID || !strings.HasPrefix(e.Error.Message, tt.want) {
				t.Errorf("%s %s = %d %+v; want 400 invalid %q", tt.method, tt.path, st, e.Error, tt.want)
			}
		})
	}
	if after := snapshot(t, ts, context.Background()); after != before {
		t.Errorf("refused requests changed the office: before %+v, after %+v", before, after)
	}
	var m bullpen.Member
	if st := ts.do("POST", "/api/v1/members", ts.Token, map[string]any{"handle": "dev", "display_name": "👩‍💻 Dev ❤️"}, &m); st != 201 {
		t.Errorf("create with an emoji ZWJ sequence = %d, want 201", st)
	}
}
