package mcp_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/mcp"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// testOffice is an office on a fresh SQLite database with an agents service
// (not started: no turns run) and one agent, @tester, with tools.
type testOffice struct {
	off   *office.Office
	db    *store.DB
	svc   *agents.Service
	admin bullpen.Member
	agent bullpen.Member
	token string // the agent's
}

func openAgents(tb testing.TB, tools []string) *testOffice {
	tb.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.Config(tb, store.SQLite))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	o := &testOffice{db: db}
	if o.off, err = office.New(ctx, db, office.Config{}); err != nil {
		tb.Fatal(err)
	}
	adminTok, _ := o.off.Bootstrap(ctx, "admin")
	o.admin, _ = o.off.Authenticate(ctx, adminTok)
	if o.svc, err = agents.New(agents.Config{Office: o.off, DB: db, Logger: quiet}); err != nil {
		tb.Fatal(err)
	}
	hired, err := o.svc.Hire(ctx, o.admin, bullpen.HireInput{Spec: &bullpen.Role{Handle: "tester", Name: "Tester", Prompt: "test", Tools: tools}})
	if err != nil {
		tb.Fatal(err)
	}
	o.agent, o.token = hired.Agent.Member, hired.Token
	return o
}

func (o *testOffice) handler() http.Handler {
	return mcp.New(mcp.Deps{Auth: o.off, Tools: o.svc, Logger: quiet})
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
