package web_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web"
)

// Each bad request gets a clear error in the one error shape, and nothing
// is stored: no event, message, member or channel appears.
func TestBadInputChangesNothing(t *testing.T) {
	ts := newServer(t, web.Config{BodyLimit: 64 << 10})
	ctx := context.Background()
	var tok struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	ts.do("POST", "/api/v1/tokens", ts.Token, map[string]string{"name": "soon revoked"}, &tok)
	if st := ts.do("DELETE", "/api/v1/tokens/"+itoa(tok.ID), ts.Token, nil, nil); st != http.StatusNoContent {
		t.Fatalf("revoke: %d", st)
	}
	b := ts.login(ts.Token)

	tests := []struct {
		name   string
		method string
		path   string
		token  string
		body   any
		status int
		code   string
	}{
		{"malformed JSON", "POST", "/api/v1/channels/1/messages", ts.Token, `{"body": "x"`, 400, bullpen.EINVALID},
		{"not an object", "POST", "/api/v1/channels/1/messages", ts.Token, `["x"]`, 400, bullpen.EINVALID},
		{"trailing data", "POST", "/api/v1/channels/1/messages", ts.Token, `{"body":"x"} {}`, 400, bullpen.EINVALID},
		{"unknown field", "POST", "/api/v1/channels/1/messages", ts.Token, `{"body":"x","author_id":9}`, 400, bullpen.EINVALID},
		{"wrong type", "POST", "/api/v1/channels/1/messages", ts.Token, `{"body":5}`, 400, bullpen.EINVALID},
		{"empty body", "POST", "/api/v1/channels/1/messages", ts.Token, ``, 400, bullpen.EINVALID},
		{"blank message", "POST", "/api/v1/channels/1/messages", ts.Token, `{"body":"  "}`, 400, bullpen.EINVALID},
		{"message over limit", "POST", "/api/v1/channels/1/messages", ts.Token, map[string]string{"body": strings.Repeat("é", bullpen.MaxMessageBody+1)}, 413, bullpen.ETOOLARGE},
		{"body over server limit", "POST", "/api/v1/channels/1/messages", ts.Token, `{"body":"` + strings.Repeat("a", 70<<10) + `"}`, 413, bullpen.ETOOLARGE},
		{"unknown channel", "POST", "/api/v1/channels/999/messages", ts.Token, `{"body":"x"}`, 404, bullpen.ENOTFOUND},
		{"bad id", "POST", "/api/v1/channels/abc/messages", ts.Token, `{"body":"x"}`, 400, bullpen.EINVALID},
		{"negative id", "GET", "/api/v1/channels/-1", ts.Token, nil, 400, bullpen.EINVALID},
		{"unknown thread", "POST", "/api/v1/channels/1/messages", ts.Token, `{"body":"x","thread_id":777}`, 404, bullpen.ENOTFOUND},
		{"unknown message edit", "PATCH", "/api/v1/messages/424242", ts.Token, `{"body":"x"}`, 404, bullpen.ENOTFOUND},
		{"unknown member", "GET", "/api/v1/members/555", ts.Token, nil, 404, bullpen.ENOTFOUND},
		{"bad handle", "POST", "/api/v1/members", ts.Token, `{"handle":"Not OK!","display_name":"x"}`, 400, bullpen.EINVALID},
		{"reserved handle", "POST", "/api/v1/members", ts.Token, `{"handle":"all","display_name":"x"}`, 400, bullpen.EINVALID},
		{"bad kind", "POST", "/api/v1/members", ts.Token, `{"handle":"bob","display_name":"x","kind":"robot"}`, 400, bullpen.EINVALID},
		{"bad channel name", "POST", "/api/v1/channels", ts.Token, `{"name":"Bad Name"}`, 400, bullpen.EINVALID},
		{"long topic", "POST", "/api/v1/channels", ts.Token, map[string]string{"name": "ok", "topic": strings.Repeat("t", 300)}, 400, bullpen.EINVALID},
		{"no auth", "POST", "/api/v1/channels/1/messages", "", `{"body":"x"}`, 401, bullpen.EUNAUTHORIZED},
		{"garbage token", "POST", "/api/v1/channels/1/messages", "nope", `{"body":"x"}`, 401, bullpen.EUNAUTHORIZED},
		{"revoked token", "POST", "/api/v1/channels/1/messages", tok.Token, `{"body":"x"}`, 401, bullpen.EUNAUTHORIZED},
		{"unknown endpoint", "GET", "/api/v1/nope", ts.Token, nil, 404, bullpen.ENOTFOUND},
		{"bad since", "GET", "/api/v1/events?since=x", ts.Token, nil, 400, bullpen.EINVALID},
		{"bad cursor", "GET", "/api/v1/channels/1/messages?before=zz", ts.Token, nil, 400, bullpen.EINVALID},
	}
	before := snapshot(t, ts, ctx)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e apiError
			st := ts.do(tt.method, tt.path, tt.token, tt.body, &e)
			if st != tt.status || e.Error.Code != tt.code || e.Error.Message == "" {
				t.Errorf("%s %s = %d %+v; want %d %q with a message", tt.method, tt.path, st, e.Error, tt.status, tt.code)
			}
		})
	}
	t.Run("wrong CSRF token", func(t *testing.T) {
		b.csrf = "not-the-token"
		var e apiError
		if st := b.do("POST", "/api/v1/channels/1/messages", map[string]string{"body": "x"}, &e); st != 403 || e.Error.Code != bullpen.EFORBIDDEN {
			t.Errorf("post with wrong CSRF = %d %+v; want 403 forbidden", st, e)
		}
		b.csrf = ""
		if st := b.do("POST", "/api/v1/channels", map[string]string{"name": "sneaky"}, &e); st != 403 {
			t.Errorf("create channel without CSRF = %d; want 403", st)
		}
	})
	if after := snapshot(t, ts, ctx); after != before {
		t.Errorf("bad requests changed the office: before %+v, after %+v", before, after)
	}
}

type counts struct{ lastSeq, messages, members int64 }

func snapshot(t *testing.T, ts *testServer, ctx context.Context) counts {
	t.Helper()
	seq, err1 := ts.DB.LastSeq(ctx)
	msgs, err2 := ts.DB.CountMessages(ctx, 0)
	mems, err3 := ts.DB.CountMembers(ctx)
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	return counts{seq, msgs, mems}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
