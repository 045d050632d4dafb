package web_test

import (
	"testing"

	"github.com/bullpen-hq/bullpen/web"
)

// TestOfficeRoutesAgainstSpec drives the message, thread, membership,
// member and token routes that other tests leave out, so that their
// answers are validated against the OpenAPI document too.
func TestOfficeRoutesAgainstSpec(t *testing.T) {
	ts := newServer(t, web.Config{})
	var ch struct {
		ID int64 `json:"id"`
	}
	if st := ts.do("POST", "/api/v1/channels", ts.Token, map[string]any{"name": "spec", "topic": "checked"}, &ch); st != 201 {
		t.Fatalf("create channel = %d", st)
	}
	id := itoa(ch.ID)
	if st := ts.do("POST", "/api/v1/channels/"+id+"/leave", ts.Token, nil, nil); st != 200 {
		t.Errorf("leave = %d", st)
	}
	if st := ts.do("POST", "/api/v1/channels/"+id+"/join", ts.Token, nil, nil); st != 200 {
		t.Errorf("join = %d", st)
	}
	var root, reply struct {
		ID       int64  `json:"id"`
		ThreadID int64  `json:"thread_id"`
		Body     string `json:"body"`
	}
	ts.do("POST", "/api/v1/channels/"+id+"/messages", ts.Token, map[string]any{"body": "root"}, &root)
	ts.do("POST", "/api/v1/channels/"+id+"/messages", ts.Token, map[string]any{"body": "reply", "thread_id": root.ID}, &reply)
	if reply.ThreadID != root.ID {
		t.Fatalf("reply thread_id = %d, want %d", reply.ThreadID, root.ID)
	}
	var got struct {
		Body string `json:"body"`
	}
	if st := ts.do("GET", "/api/v1/messages/"+itoa(reply.ID), ts.Token, nil, &got); st != 200 || got.Body != "reply" {
		t.Errorf("get message = %d %q", st, got.Body)
	}
	var thread struct {
		Replies []struct {
			ID int64 `json:"id"`
		} `json:"replies"`
	}
	if st := ts.do("GET", "/api/v1/messages/"+itoa(root.ID)+"/thread", ts.Token, nil, &thread); st != 200 || len(thread.Replies) != 1 {
		t.Errorf("thread = %d, %d replies", st, len(thread.Replies))
	}
	var deleted struct {
		Deleted bool `json:"deleted"`
	}
	if st := ts.do("DELETE", "/api/v1/messages/"+itoa(reply.ID), ts.Token, nil, &deleted); st != 200 || !deleted.Deleted {
		t.Errorf("delete = %d %+v", st, deleted)
	}
	var members, tokens struct {
		Items []map[string]any `json:"items"`
	}
	if st := ts.do("GET", "/api/v1/members", ts.Token, nil, &members); st != 200 || len(members.Items) == 0 {
		t.Errorf("members = %d %d", st, len(members.Items))
	}
	if st := ts.do("GET", "/api/v1/tokens", ts.Token, nil, &tokens); st != 200 || len(tokens.Items) == 0 {
		t.Errorf("tokens = %d %d", st, len(tokens.Items))
	}
}
