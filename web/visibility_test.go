package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/web"
)

// TestPrivateKindsReachOnlyTheirAudience: a writer that forgets an
// event's audience does not show a direct message, or a sandbox, to a
// websocket client outside it. The store gives each event the audience
// its kind declares (a DM's message: the DM's two members; a sandbox's
// state: its owner), and refuses one that names an outsider.
func TestPrivateKindsReachOnlyTheirAudience(t *testing.T) {
	ts := newServer(t, web.Config{})
	ctx := context.Background()
	admin, err := ts.Off.Authenticate(ctx, ts.Token)
	if err != nil {
		t.Fatal(err)
	}
	member := func(handle string) (bullpen.Member, string) {
		m, err := ts.Off.CreateMember(ctx, admin, bullpen.MemberInput{Handle: handle, DisplayName: handle, Kind: bullpen.KindHuman})
		if err != nil {
			t.Fatal(err)
		}
		tok, _, err := ts.Off.CreateToken(ctx, admin, m.ID, "ws")
		if err != nil {
			t.Fatal(err)
		}
		return m, tok
	}
	ann, annTok := member("ann")
	bob, _ := member("bob")
	carol, carolTok := member("carol")
	dm, err := ts.Off.OpenDM(ctx, ann, bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	annWS, carolWS := ts.dial(annTok, ""), ts.dial(carolTok, "")
	defer annWS.Close()
	defer carolWS.Close()

	_, err = ts.DB.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.Emit(bullpen.EventMessagePosted, dm.ID, []int64{ann.ID, carol.ID}, bullpen.Message{ID: 990, ChannelID: dm.ID, AuthorID: ann.ID, Body: "leak"})
		return err
	})
	if err == nil {
		t.Error("a DM's message for a member outside the DM was stored")
	}
	_, err = ts.DB.Transact(ctx, func(tx *store.Tx) error {
		if _, err := tx.Emit(bullpen.EventMessagePosted, dm.ID, nil, bullpen.Message{ID: 991, ChannelID: dm.ID, AuthorID: ann.ID, Body: "secret"}); err != nil {
			return err
		}
		if _, err := tx.Emit(bullpen.EventSandboxState, 0, nil, bullpen.SandboxStateEvent{ID: "sb_ann", OwnerID: ann.ID, State: "running"}); err != nil {
			return err
		}
		_, err := tx.Emit(bullpen.EventMemberUpdated, 0, nil, carol) // seen by all: the end of the private ones
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := kindsUntil(t, carolWS, bullpen.EventMemberUpdated); got[bullpen.EventMessagePosted] || got[bullpen.EventSandboxState] {
		t.Errorf("a member outside the DM and the sandbox got %v over the websocket, want neither", got)
	}
	if got := kindsUntil(t, annWS, bullpen.EventMemberUpdated); !got[bullpen.EventMessagePosted] || !got[bullpen.EventSandboxState] {
		t.Errorf("the DM's member and the sandbox's owner got %v, want both", got)
	}
}

// kindsUntil reads frames until an event of kind last arrives, and
// returns the kinds of the events read.
func kindsUntil(t *testing.T, c *websocket.Conn, last string) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	for !got[last] {
		var f frame
		if err := c.ReadJSON(&f); err != nil {
			t.Fatalf("read websocket (got %v): %v", got, err)
		}
		for _, ev := range f.Events {
			got[ev.Type] = true
		}
	}
	return got
}
