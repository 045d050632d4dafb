package office_test

import (
	"context"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
)

// fixture is an office with an admin, a second human and an agent.
type fixture struct {
	off              *office.Office
	db               *store.DB
	admin, ada, lead bullpen.Member
	general          bullpen.Channel
	adminToken       string
}

func newFixture(t *testing.T, cfg store.Config) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	off, err := office.New(ctx, db, office.Config{})
	if err != nil {
		t.Fatalf("office.New: %v", err)
	}
	f := &fixture{off: off, db: db}
	if f.adminToken, err = off.Bootstrap(ctx, "admin"); err != nil || f.adminToken == "" {
		t.Fatalf("Bootstrap = %q, %v", f.adminToken, err)
	}
	if f.admin, err = off.Authenticate(ctx, f.adminToken); err != nil {
		t.Fatalf("Authenticate(bootstrap token): %v", err)
	}
	f.ada = mustMember(t, off, f.admin, bullpen.MemberInput{Handle: "ada", DisplayName: "Ada", Kind: bullpen.KindHuman})
	f.lead = mustMember(t, off, f.admin, bullpen.MemberInput{Handle: "lead", DisplayName: "Lead", Kind: bullpen.KindAgent, Title: "Team lead"})
	if f.general, err = off.ChannelByName(ctx, f.admin, bullpen.GeneralChannel); err != nil {
		t.Fatalf("general: %v", err)
	}
	return f
}

func mustMember(t *testing.T, off *office.Office, actor bullpen.Member, in bullpen.MemberInput) bullpen.Member {
	t.Helper()
	m, err := off.CreateMember(context.Background(), actor, in)
	if err != nil {
		t.Fatalf("CreateMember(%s): %v", in.Handle, err)
	}
	return m
}

func mustPost(t testing.TB, off *office.Office, actor bullpen.Member, ch int64, body string) bullpen.Message {
	t.Helper()
	m, err := off.Post(context.Background(), actor, bullpen.PostInput{ChannelID: ch, Body: body})
	if err != nil {
		t.Fatalf("Post(%q): %v", body, err)
	}
	return m
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := bullpen.ErrorCode(err); got != code {
		t.Errorf("%s: error = %v (code %q), want code %q", what, err, got, code)
	}
}
