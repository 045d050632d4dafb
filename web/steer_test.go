package web_test

import (
	"slices"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web"
)

// POST /api/v1/teams hires a whole pack in one request, admins only,
// skipping handles already taken, and returns no tokens.
func TestHireTeamAPI(t *testing.T) {
	ts := newAgentServer(t, echoScript)
	var human bullpen.Member
	if st := ts.do("POST", "/api/v1/members", ts.Token, map[string]any{"handle": "bob", "display_name": "Bob", "kind": "human"}, &human); st != 201 {
		t.Fatalf("create bob: %d", st)
	}
	var tok struct{ Token string }
	if st := ts.do("POST", "/api/v1/tokens", ts.Token, map[string]any{"member_id": human.ID, "name": "bob"}, &tok); st != 201 {
		t.Fatalf("bob's token: %d", st)
	}
	var e apiError
	if st := ts.do("POST", "/api/v1/teams", tok.Token, map[string]any{"pack": "starter"}, &e); st != 403 {
		t.Errorf("a non-admin hires a team: %d, want 403", st)
	}
	if st := ts.do("POST", "/api/v1/teams", ts.Token, map[string]any{}, &e); st != 400 {
		t.Errorf("no pack: %d, want 400", st)
	}
	if st := ts.do("POST", "/api/v1/teams", ts.Token, map[string]any{"pack": "nosuch"}, &e); st != 404 {
		t.Errorf("unknown pack: %d, want 404", st)
	}
	if st := ts.do("POST", "/api/v1/teams", ts.Token, map[string]any{"pack": "starter", "extra": 1}, &e); st != 400 {
		t.Errorf("unknown field: %d, want 400", st)
	}
	var agents struct{ Items []bullpen.AgentView }
	ts.do("GET", "/api/v1/agents", ts.Token, nil, &agents)
	if len(agents.Items) != 0 {
		t.Fatalf("refused requests hired %d agents", len(agents.Items))
	}
	var got struct{ Items []map[string]any }
	if st := ts.do("POST", "/api/v1/teams", ts.Token, map[string]any{"pack": "starter"}, &got); st != 201 || len(got.Items) != 4 {
		t.Fatalf("hire the starter team: %d, %d agents, want 201 and 4", st, len(got.Items))
	}
	var handles []string
	for _, a := range got.Items {
		handles = append(handles, a["handle"].(string))
		if _, ok := a["token"]; ok {
			t.Errorf("a team hire returned a token: %v", a)
		}
	}
	slices.Sort(handles)
	if !slices.Equal(handles, []string{"designer", "engineer", "lead", "pm"}) {
		t.Errorf("hired %v", handles)
	}
	if st := ts.do("POST", "/api/v1/teams", ts.Token, map[string]any{"pack": "starter"}, &got); st != 201 || len(got.Items) != 0 {
		t.Errorf("a second team hire: %d, %d agents, want 201 and none", st, len(got.Items))
	}
}

// A post answers with the handles that name nobody: not @all or @here,
// not a mention inside code, not a member.
func TestPostNamesUnresolvedMentions(t *testing.T) {
	ts := newServer(t, web.Config{})
	var m bullpen.Message
	body := "@admin, @ghost and @Spook-, with @all and `@incode`:\n```\n@fenced\n```\nmail a@b.example"
	if st := ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]any{"body": body}, &m); st != 201 {
		t.Fatalf("post: %d", st)
	}
	if !slices.Equal(m.UnresolvedMentions, []string{"ghost", "spook"}) {
		t.Errorf("unresolved_mentions = %q, want [ghost spook]", m.UnresolvedMentions)
	}
	var stored bullpen.Message
	ts.do("GET", "/api/v1/messages/"+itoa(m.ID), ts.Token, nil, &stored)
	if stored.UnresolvedMentions != nil {
		t.Errorf("the stored message carries unresolved_mentions %q", stored.UnresolvedMentions)
	}
	var known bullpen.Message
	if st := ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]any{"body": "all known: @admin"}, &known); st != 201 || known.UnresolvedMentions != nil {
		t.Errorf("a post naming only members: %d %q", st, known.UnresolvedMentions)
	}
}
