package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/wiki"
)

// Invalid UTF-8 in any JSON string of any route is a 400 that names the
// field, and nothing is stored: before the fix, encoding/json replaced
// the bytes with U+FFFD and the request went through.
func TestInvalidUTF8IsRefused(t *testing.T) {
	db, off, token := openOffice(t, store.SQLite)
	ag, err := agents.New(agents.Config{Office: off, DB: db, Providers: map[string]llm.Provider{"scripted": scripted.New(echoScript)},
		DefaultProvider: "scripted", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, db, off, token, web.Config{}, web.Services{Office: off, Agents: ag, Wiki: wiki.New(db, wiki.Config{})})
	var msg bullpen.Message
	if st := ts.do("POST", "/api/v1/channels/1/messages", token, map[string]string{"body": "first"}, &msg); st != 201 {
		t.Fatalf("post: %d", st)
	}
	const bad = "ad\xffmin"
	tests := []struct {
		name, method, path, body, field string
	}{
		{"message", "POST", "/api/v1/channels/1/messages", `{"body":"` + bad + `"}`, "body"},
		{"message, lone surrogate", "POST", "/api/v1/channels/1/messages", `{"body":"a\udc00"}`, "body"},
		{"edit", "PATCH", "/api/v1/messages/" + itoa(msg.ID), `{"body":"` + bad + `"}`, "body"},
		{"member", "POST", "/api/v1/members", `{"handle":"bob","display_name":"` + bad + `"}`, "display_name"},
		{"member patch", "PATCH", "/api/v1/members/1", `{"title":"` + bad + `"}`, "title"},
		{"channel", "POST", "/api/v1/channels", `{"name":"x","topic":"` + bad + `"}`, "topic"},
		{"dm", "POST", "/api/v1/dms", `{"handle":"` + bad + `"}`, "handle"},
		{"token", "POST", "/api/v1/tokens", `{"name":"` + bad + `"}`, "name"},
		{"hire", "POST", "/api/v1/agents", `{"role":"starter/engineer","handle":"eng","name":"` + bad + `"}`, "name"},
		{"hire spec", "POST", "/api/v1/agents", `{"spec":{"handle":"eng","name":"Eng","prompt":"` + bad + `"}}`, "spec.prompt"},
		{"wiki page", "POST", "/api/v1/wiki/pages", `{"slug":"p","title":"P","body":"x","tags":["a","` + bad + `"]}`, "tags[1]"},
		{"wiki preview", "POST", "/api/v1/wiki/preview", `{"body":"` + bad + `"}`, "body"},
	}
	before := snapshot(t, ts, context.Background())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e apiError
			st := ts.do(tt.method, tt.path, token, tt.body, &e)
			want := tt.field + ": invalid UTF-8"
			if st != http.StatusBadRequest || e.Error.Code != bullpen.EINVALID || e.Error.Message != want {
				t.Errorf("%s %s = %d %+v; want 400 invalid %q", tt.method, tt.path, st, e.Error, want)
			}
		})
	}
	if after := snapshot(t, ts, context.Background()); after != before {
		t.Errorf("refused requests changed the office: before %+v, after %+v", before, after)
	}
	var pages struct{ Items []any }
	if ts.do("GET", "/api/v1/wiki/pages", token, nil, &pages); len(pages.Items) != 0 {
		t.Errorf("a wiki page was stored: %v", pages.Items)
	}
	// The same bodies with valid text go through, so the refusals above
	// are about the bytes and nothing else.
	for _, tt := range tests[:1] {
		if st := ts.do(tt.method, tt.path, token, strings.ReplaceAll(tt.body, "\xff", ""), nil); st != 201 {
			t.Errorf("%s with valid text = %d, want 201", tt.name, st)
		}
	}
}

// The sandbox routes decode through the same helper.
func TestInvalidUTF8SandboxSpec(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	var e apiError
	st := s.do("POST", "/api/v1/sandboxes", s.Token, "{\"image\":\"host\",\"env\":{\"GREETING\":\"h\xc3i\"}}", &e)
	if st != http.StatusBadRequest || e.Error.Message != "env.GREETING: invalid UTF-8" {
		t.Errorf("create sandbox with bad env = %d %+v; want 400 env.GREETING: invalid UTF-8", st, e.Error)
	}
	if ids := s.allIDs(); len(ids) != 0 {
		t.Errorf("a sandbox was created: %v", ids)
	}
}
