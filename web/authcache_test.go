package web_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"github.com/bullpen-hq/bullpen/web"
)

// newToken creates a token for memberID (0: the caller) and returns its
// id and secret.
func (ts *testServer) newToken(by string, memberID int64, name string) (int64, string) {
	ts.t.Helper()
	var tok struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	if st := ts.do("POST", "/api/v1/tokens", by, map[string]any{"name": name, "member_id": memberID}, &tok); st != http.StatusCreated {
		ts.t.Fatalf("create token: %d", st)
	}
	return tok.ID, tok.Token
}

func (ts *testServer) post(token string, channelID int64, body string) int {
	ts.t.Helper()
	return ts.do("POST", fmt.Sprintf("/api/v1/channels/%d/messages", channelID), token, map[string]string{"body": body}, nil)
}

// A token the server has cached (it served requests with it) is refused
// by the very next request once it is revoked, and the refused post
// stores nothing.
func TestRevokedTokenRefusedAtOnce(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			db, off, admin := openOffice(t, d)
			ts := serve(t, db, off, admin, web.Config{}, web.Services{Office: off})
			id, tok := ts.newToken(admin, 0, "soon revoked")
			for i := range 3 {
				if st := ts.post(tok, 1, "hello"); st != http.StatusCreated {
					t.Fatalf("post %d with the new token: %d", i, st)
				}
			}
			if st := ts.do("DELETE", fmt.Sprintf("/api/v1/tokens/%d", id), admin, nil, nil); st != http.StatusNoContent {
				t.Fatalf("revoke: %d", st)
			}
			if st := ts.post(tok, 1, "after revoke"); st != http.StatusUnauthorized {
				t.Errorf("post with the revoked token = %d, want 401", st)
			}
			if n, err := db.CountMessages(context.Background(), 1); err != nil || n != 3 {
				t.Errorf("CountMessages = %d, %v; want 3", n, err)
			}
		})
	}
}

// A member taken out of a DM (here by a store write that the office
// itself never makes) cannot post there with the next request, and a
// renamed member is seen renamed at once: whatever writes the rows, the
// cached channel and member are dropped.
func TestMembershipChangeSeenAtOnce(t *testing.T) {
	db, off, admin := openOffice(t, store.SQLite)
	ts := serve(t, db, off, admin, web.Config{}, web.Services{Office: off})
	var bob bullpen.Member
	if st := ts.do("POST", "/api/v1/members", admin, map[string]string{"handle": "bob", "display_name": "Bob"}, &bob); st != http.StatusCreated {
		t.Fatalf("create bob: %d", st)
	}
	_, bobTok := ts.newToken(admin, bob.ID, "bob's")
	var dm bullpen.Channel
	if st := ts.do("POST", "/api/v1/dms", admin, map[string]int64{"member_id": bob.ID}, &dm); st != http.StatusOK && st != http.StatusCreated {
		t.Fatalf("open DM: %d", st)
	}
	for i := range 2 {
		if st := ts.post(bobTok, dm.ID, "hi"); st != http.StatusCreated {
			t.Fatalf("bob's post %d in the DM: %d", i, st)
		}
	}
	_, err := db.Transact(context.Background(), func(tx *store.Tx) error {
		_, err := tx.RemoveChannelMember(dm.ID, bob.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if st := ts.post(bobTok, dm.ID, "still here?"); st != http.StatusNotFound && st != http.StatusForbidden {
		t.Errorf("post by a removed DM member = %d, want 403 or 404", st)
	}

	var me bullpen.Member
	ts.do("GET", "/api/v1/me", bobTok, nil, &me)
	if st := ts.do("PATCH", fmt.Sprintf("/api/v1/members/%d", bob.ID), admin, map[string]string{"display_name": "Robert"}, nil); st != http.StatusOK {
		t.Fatalf("rename: %d", st)
	}
	if ts.do("GET", "/api/v1/me", bobTok, nil, &me); me.DisplayName != "Robert" {
		t.Errorf("GET /me after the rename = %q, want Robert", me.DisplayName)
	}
}

// On PostgreSQL a token revoked through another replica is refused here
// too, once that replica's notification arrives (no restart, no expiry).
func TestRevokedOnOtherReplicaRefused(t *testing.T) {
	if ds := storetest.Dialects(t); ds[len(ds)-1] != store.Postgres {
		t.Skip("needs PostgreSQL")
	}
	ctx := context.Background()
	cfg := storetest.Config(t, store.Postgres)
	db, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	off, err := office.New(ctx, db, office.Config{})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := off.Bootstrap(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, db, off, admin, web.Config{}, web.Services{Office: off})
	id, tok := ts.newToken(admin, 0, "revoked elsewhere")
	if st := ts.post(tok, 1, "cached now"); st != http.StatusCreated {
		t.Fatalf("post: %d", st)
	}
	other, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	otherOff, err := office.New(ctx, other, office.Config{})
	if err != nil {
		t.Fatal(err)
	}
	me, err := otherOff.Authenticate(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if err := otherOff.Revoke(ctx, me, id); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for ts.post(tok, 1, "revoked elsewhere?") != http.StatusUnauthorized {
		if time.Now().After(deadline) {
			t.Fatal("the token revoked on the other replica still works after 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
