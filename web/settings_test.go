package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/settings"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/bullpen-hq/bullpen/web"
)

const secretKey = "sk-very-secret-key-0123456789-wxyz"

// newSettingsServer serves the office with provider settings; logs go to
// the returned buffer.
func newSettingsServer(t *testing.T) (*testServer, *bytes.Buffer) {
	t.Helper()
	db, off, token := openOffice(t, store.SQLite)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	svc, err := settings.New(settings.Config{DB: db, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, db, off, token, web.Config{Logger: log}, web.Services{Office: off, Settings: svc}), &logs
}

// member adds a human member with a token of their own.
func (ts *testServer) member(handle string) (bullpen.Member, string) {
	ts.t.Helper()
	ctx := context.Background()
	admin, err := ts.Off.Authenticate(ctx, ts.Token)
	if err != nil {
		ts.t.Fatal(err)
	}
	m, err := ts.Off.CreateMember(ctx, admin, bullpen.MemberInput{Handle: handle, DisplayName: handle, Kind: bullpen.KindHuman})
	if err != nil {
		ts.t.Fatal(err)
	}
	secret, _, err := ts.Off.CreateToken(ctx, admin, m.ID, "laptop")
	if err != nil {
		ts.t.Fatal(err)
	}
	return m, secret
}

// body sends a request and returns the status and the raw body.
func (ts *testServer) body(method, path, token string, in any) (int, string) {
	ts.t.Helper()
	var out []byte
	st := ts.do(method, path, token, in, (*rawJSON)(&out))
	return st, string(out)
}

// rawJSON keeps a response body as it came.
type rawJSON []byte

func (r *rawJSON) UnmarshalJSON(b []byte) error { *r = append((*r)[:0], b...); return nil }

// The API key goes in and never comes out: not in any REST response
// (create, list, get, edit, test), not in the event log, not on the
// Settings page, not in the server's log. Only its hint shows.
func TestProviderKeyNeverLeaves(t *testing.T) {
	fake := llmtest.NewFakeOpenAI(llmtest.Text("OK"))
	defer fake.Close()
	ts, logs := newSettingsServer(t)
	var seen []string
	record := func(step string, want int) func(int, string) {
		return func(st int, body string) {
			t.Helper()
			if st != want {
				t.Fatalf("%s = %d, want %d: %s", step, st, want, body)
			}
			seen = append(seen, step+": "+body)
		}
	}
	var created bullpen.Provider
	st := ts.do("POST", "/api/v1/settings/providers", ts.Token, map[string]any{"name": "local", "kind": "openai",
		"base_url": fake.BaseURL(), "api_key": secretKey, "model": "m"}, &created)
	if st != 201 || created.APIKeyHint != "…wxyz" || !created.IsDefault {
		t.Fatalf("create = %d %+v", st, created)
	}
	id := fmt.Sprint(created.ID)
	record("list", 200)(ts.body("GET", "/api/v1/settings/providers", ts.Token, nil))
	record("get", 200)(ts.body("GET", "/api/v1/settings/providers/"+id, ts.Token, nil))
	record("edit", 200)(ts.body("PATCH", "/api/v1/settings/providers/"+id, ts.Token, map[string]any{"model": "m2"}))
	record("test", 200)(ts.body("POST", "/api/v1/settings/providers/"+id+"/test", ts.Token, nil))
	record("events", 200)(ts.body("GET", "/api/v1/events?since=0", ts.Token, nil))
	b := ts.login(ts.Token)
	resp, err := b.client.Get(ts.URL + "/settings")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "…wxyz") {
		t.Fatalf("settings page = %d, without the key's hint", resp.StatusCode)
	}
	seen = append(seen, "page: "+string(page), "log: "+logs.String())
	for _, s := range seen {
		if strings.Contains(s, secretKey) || strings.Contains(s, secretKey[:20]) {
			t.Errorf("the API key leaked in %s", s[:strings.Index(s, ":")])
		}
	}
	if !strings.Contains(seen[0], `"api_key_hint":"…wxyz"`) {
		t.Errorf("list shows no hint: %s", seen[0])
	}
	if !strings.Contains(seen[3], `"ok":true`) {
		t.Errorf("test connection against the fake: %s", seen[3])
	}
	if n := len(fake.Requests()); n != 1 || fake.Requests()[0].Header.Get("Authorization") != "Bearer "+secretKey {
		t.Errorf("the fake got %d requests; the test must send the stored key", n)
	}
}

// A refused value's error names its field (the JSON name), so that the
// Settings form shows it under that field; an error about no one field
// names none.
func TestProviderErrorNamesField(t *testing.T) {
	ts, _ := newSettingsServer(t)
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "x", "kind": "anthropic", "api_key": "k", "embeddings_model": "e"}, "embeddings_model"},
		{map[string]any{"name": "x", "kind": "openai", "api_key": "k", "embeddings_model": "text embedding"}, "embeddings_model"},
		{map[string]any{"name": "x", "kind": "openai", "base_url": "ftp://h"}, "base_url"},
		{map[string]any{"name": "x", "kind": "openai"}, ""},
	} {
		st, body := ts.body("POST", "/api/v1/settings/providers", ts.Token, tc.body)
		var e struct {
			Error map[string]string `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &e); err != nil || st != 400 {
			t.Fatalf("POST %v = %d %s", tc.body, st, body)
		}
		if f, named := e.Error["field"]; f != tc.field || named != (tc.field != "") {
			t.Errorf("POST %v: error %s names the field %q, want %q", tc.body, body, f, tc.field)
		}
	}
	var list struct{ Items []bullpen.Provider }
	if ts.do("GET", "/api/v1/settings/providers", ts.Token, nil, &list); len(list.Items) != 0 {
		t.Errorf("refused input stored %+v", list.Items)
	}
}

// Members who are not admins get 403 from every settings route and page,
// before anything is read or changed.
func TestSettingsForbiddenToMembers(t *testing.T) {
	ts, _ := newSettingsServer(t)
	var p bullpen.Provider
	ts.do("POST", "/api/v1/settings/providers", ts.Token, map[string]any{"name": "x", "kind": "openai", "api_key": "k"}, &p)
	_, bob := ts.member("bob")
	id := fmt.Sprint(p.ID)
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/v1/settings/providers"}, {"POST", "/api/v1/settings/providers"},
		{"GET", "/api/v1/settings/providers/" + id}, {"PATCH", "/api/v1/settings/providers/" + id},
		{"DELETE", "/api/v1/settings/providers/" + id}, {"POST", "/api/v1/settings/providers/" + id + "/test"},
		{"GET", "/api/v1/tokens?all=1"},
	} {
		var e apiError
		if st := ts.do(r.method, r.path, bob, map[string]any{"name": "y", "kind": "openai", "api_key": "k"}, &e); st != 403 || e.Error.Code != bullpen.EFORBIDDEN {
			t.Errorf("%s %s as a member = %d %+v, want 403", r.method, r.path, st, e)
		}
	}
	var list struct{ Items []bullpen.Provider }
	if ts.do("GET", "/api/v1/settings/providers", ts.Token, nil, &list); len(list.Items) != 1 || list.Items[0].Name != "x" {
		t.Errorf("after the refused calls providers = %+v, want x unchanged", list.Items)
	}
	b := ts.login(bob)
	resp, err := b.client.Get(ts.URL + "/settings")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /settings as a member = %d, want 403", resp.StatusCode)
	}
}

// An admin lists every token with whose it is, and revokes another
// member's: that token then gets 401. A member cannot revoke the admin's.
func TestAdminRevokesAnyToken(t *testing.T) {
	ts, _ := newSettingsServer(t)
	_, bob := ts.member("bob")
	if st := ts.do("GET", "/api/v1/me", bob, nil, nil); st != 200 {
		t.Fatalf("bob's token = %d before the revoke", st)
	}
	var all struct{ Items []view.TokenView }
	if st := ts.do("GET", "/api/v1/tokens?all=1", ts.Token, nil, &all); st != 200 || len(all.Items) != 2 {
		t.Fatalf("all tokens = %d, %d items, want 2", st, len(all.Items))
	}
	var bobs, admins view.TokenView
	for _, tk := range all.Items {
		switch tk.Handle {
		case "bob":
			bobs = tk
		case "admin":
			admins = tk
		}
	}
	if bobs.ID == 0 || bobs.Hint != "…"+bob[len(bob)-4:] || bobs.LastUsedAt == nil || bobs.MemberKind != bullpen.KindHuman {
		t.Fatalf("bob's token = %+v; want his hint and a last_used_at", bobs)
	}
	if st := ts.do("DELETE", fmt.Sprintf("/api/v1/tokens/%d", admins.ID), bob, nil, nil); st != 404 {
		t.Errorf("bob revoking the admin's token = %d, want 404", st)
	}
	if st := ts.do("DELETE", fmt.Sprintf("/api/v1/tokens/%d", bobs.ID), ts.Token, nil, nil); st != 204 {
		t.Fatalf("admin revoking bob's token = %d, want 204", st)
	}
	if st := ts.do("GET", "/api/v1/me", bob, nil, nil); st != 401 {
		t.Errorf("bob's revoked token = %d, want 401", st)
	}
	if st := ts.do("GET", "/api/v1/me", ts.Token, nil, nil); st != 200 {
		t.Errorf("the admin's own token = %d after revoking bob's, want 200", st)
	}
}
