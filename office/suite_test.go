package office_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// TestOfficeSuite runs the office's domain rules (who may do what, input
// checks, cursors, visibility, that an edit keeps what was written) on
// SQLite. What is SQL (unique names, paging, revisions, migrations, event
// order, tokens, sessions) is tested on every dialect in store/suite_test.go.
func TestOfficeSuite(t *testing.T) {
	suites := []struct {
		name string
		fn   func(*testing.T, *fixture)
	}{
		{"members", testMembers}, {"channels", testChannels}, {"messages", testMessages},
		{"events", testEvents}, {"tokens", testTokens},
	}
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) { s.fn(t, newFixture(t, storetest.Config(t, store.SQLite))) })
	}
}

func testMembers(t *testing.T, f *fixture) {
	ctx := context.Background()
	if tok, err := f.off.Bootstrap(ctx, "admin"); tok != "" || err != nil {
		t.Errorf("second Bootstrap = %q, %v; want no token", tok, err)
	}
	_, err := f.off.CreateMember(ctx, f.admin, bullpen.MemberInput{Handle: "ada", DisplayName: "Other Ada"})
	wantCode(t, "duplicate handle", err, bullpen.ECONFLICT)
	_, err = f.off.CreateMember(ctx, f.admin, bullpen.MemberInput{Handle: "Bad Handle", DisplayName: "x"})
	wantCode(t, "bad handle", err, bullpen.EINVALID)
	_, err = f.off.CreateMember(ctx, f.admin, bullpen.MemberInput{Handle: "bob", DisplayName: ""})
	wantCode(t, "empty display name", err, bullpen.EINVALID)
	_, err = f.off.CreateMember(ctx, f.ada, bullpen.MemberInput{Handle: "eve", DisplayName: "Eve"})
	wantCode(t, "non-admin creates member", err, bullpen.EFORBIDDEN)

	name := "Ada L."
	m, err := f.off.UpdateMember(ctx, f.ada, f.ada.ID, bullpen.MemberUpdate{DisplayName: &name})
	if err != nil || m.DisplayName != name {
		t.Errorf("UpdateMember(own name) = %+v, %v", m, err)
	}
	muted := true
	_, err = f.off.UpdateMember(ctx, f.ada, f.lead.ID, bullpen.MemberUpdate{Muted: &muted})
	wantCode(t, "non-admin mutes", err, bullpen.EFORBIDDEN)
	if m, err = f.off.UpdateMember(ctx, f.admin, f.lead.ID, bullpen.MemberUpdate{Muted: &muted}); err != nil || !m.Muted {
		t.Errorf("admin mutes lead = %+v, %v", m, err)
	}
	_, err = f.off.UpdateMember(ctx, f.admin, 9999, bullpen.MemberUpdate{Muted: &muted})
	wantCode(t, "update unknown member", err, bullpen.ENOTFOUND)

	all, err := f.off.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var handles []string
	for _, m := range all {
		handles = append(handles, m.Handle)
	}
	if want := []string{"ada", "admin", "lead"}; !reflect.DeepEqual(handles, want) {
		t.Errorf("Members() handles = %v, want %v", handles, want)
	}
	g, _ := f.off.ChannelByName(ctx, f.admin, bullpen.GeneralChannel)
	if !reflect.DeepEqual(g.MemberIDs, []int64{f.admin.ID, f.ada.ID, f.lead.ID}) {
		t.Errorf("#general members = %v, want all three", g.MemberIDs)
	}
}

func testChannels(t *testing.T, f *fixture) {
	ctx := context.Background()
	c, err := f.off.CreateChannel(ctx, f.ada, bullpen.ChannelInput{Name: "design", Topic: "Pixels"})
	if err != nil || c.ID == 0 || c.Kind != bullpen.ChannelPublic {
		t.Fatalf("CreateChannel = %+v, %v", c, err)
	}
	_, err = f.off.CreateChannel(ctx, f.ada, bullpen.ChannelInput{Name: "design"})
	wantCode(t, "duplicate channel", err, bullpen.ECONFLICT)
	for _, bad := range []string{"", "Has Space", "-x", "dm-1-2", string(make([]byte, 81))} {
		_, err = f.off.CreateChannel(ctx, f.ada, bullpen.ChannelInput{Name: bad})
		wantCode(t, fmt.Sprintf("channel name %q", bad), err, bullpen.EINVALID)
	}
	if c, err = f.off.JoinChannel(ctx, f.lead, c.ID); err != nil || len(c.MemberIDs) != 2 {
		t.Errorf("JoinChannel = %+v, %v; want 2 members", c, err)
	}
	if c, err = f.off.LeaveChannel(ctx, f.lead, c.ID); err != nil || len(c.MemberIDs) != 1 {
		t.Errorf("LeaveChannel = %+v, %v; want 1 member", c, err)
	}
	_, err = f.off.JoinChannel(ctx, f.ada, 12345)
	wantCode(t, "join unknown channel", err, bullpen.ENOTFOUND)

	dm, err := f.off.OpenDM(ctx, f.admin, f.lead.ID)
	if err != nil || dm.Kind != bullpen.ChannelDM {
		t.Fatalf("OpenDM = %+v, %v", dm, err)
	}
	again, err := f.off.OpenDM(ctx, f.lead, f.admin.ID)
	if err != nil || again.ID != dm.ID {
		t.Errorf("OpenDM from the other side = %+v, %v; want channel %d", again, err, dm.ID)
	}
	_, err = f.off.OpenDM(ctx, f.ada, f.ada.ID)
	wantCode(t, "DM with oneself", err, bullpen.EINVALID)
	_, err = f.off.Channel(ctx, f.ada, dm.ID)
	wantCode(t, "outsider reads DM", err, bullpen.ENOTFOUND)
	_, err = f.off.Post(ctx, f.ada, bullpen.PostInput{ChannelID: dm.ID, Body: "hi"})
	wantCode(t, "outsider posts in DM", err, bullpen.ENOTFOUND)
	_, err = f.off.JoinChannel(ctx, f.lead, dm.ID)
	wantCode(t, "join a DM", err, bullpen.EINVALID)

	list, err := f.off.Channels(ctx, f.ada)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if c.ID == dm.ID {
			t.Errorf("Channels(ada) lists the admin-lead DM")
		}
	}
	list, _ = f.off.Channels(ctx, f.lead)
	found := false
	for _, c := range list {
		found = found || c.ID == dm.ID
	}
	if !found {
		t.Errorf("Channels(lead) does not list lead's DM")
	}
}

func testMessages(t *testing.T, f *fixture) {
	ctx := context.Background()
	root := mustPost(t, f.off, f.ada, f.general.ID, "hey @lead, see `@pm` and mail x@y.z")
	if !reflect.DeepEqual(root.Mentions, []string{"lead"}) {
		t.Errorf("Mentions = %v, want [lead]", root.Mentions)
	}
	if root.Author == nil || root.Author.Handle != "ada" || root.HTML == "" {
		t.Errorf("Post result lacks author or html: %+v", root)
	}
	reply, err := f.off.Post(ctx, f.lead, bullpen.PostInput{ChannelID: f.general.ID, ThreadID: root.ID, Body: "on it"})
	if err != nil || reply.ThreadID != root.ID {
		t.Fatalf("reply = %+v, %v", reply, err)
	}
	gotRoot, replies, err := f.off.Thread(ctx, f.ada, reply.ID)
	if err != nil || gotRoot.ID != root.ID || gotRoot.ReplyCount != 1 || len(replies) != 1 || replies[0].Body != "on it" {
		t.Errorf("Thread = %+v, %+v, %v", gotRoot, replies, err)
	}
	_, err = f.off.Post(ctx, f.ada, bullpen.PostInput{ChannelID: f.general.ID, ThreadID: reply.ID, Body: "nested"})
	wantCode(t, "reply to a reply", err, bullpen.EINVALID)
	other, _ := f.off.CreateChannel(ctx, f.ada, bullpen.ChannelInput{Name: "other"})
	_, err = f.off.Post(ctx, f.ada, bullpen.PostInput{ChannelID: other.ID, ThreadID: root.ID, Body: "x"})
	wantCode(t, "thread of another channel", err, bullpen.EINVALID)
	for _, bad := range []string{"", "   \n", string([]byte{0xff, 0xfe})} {
		_, err = f.off.Post(ctx, f.ada, bullpen.PostInput{ChannelID: f.general.ID, Body: bad})
		wantCode(t, fmt.Sprintf("body %q", bad), err, bullpen.EINVALID)
	}
	_, err = f.off.Post(ctx, f.ada, bullpen.PostInput{ChannelID: f.general.ID, Body: string(make([]rune, bullpen.MaxMessageBody+1))})
	wantCode(t, "huge body", err, bullpen.ETOOLARGE)
	_, err = f.off.Post(ctx, f.ada, bullpen.PostInput{ChannelID: 999, Body: "x"})
	wantCode(t, "unknown channel", err, bullpen.ENOTFOUND)

	// Edits and deletes keep what was written.
	_, err = f.off.Edit(ctx, f.lead, root.ID, "hijack")
	wantCode(t, "edit someone else's message", err, bullpen.EFORBIDDEN)
	ed, err := f.off.Edit(ctx, f.ada, root.ID, "edited @pm")
	if err != nil || ed.EditedAt == nil || ed.Body != "edited @pm" || !reflect.DeepEqual(ed.Mentions, []string{"pm"}) {
		t.Errorf("Edit = %+v, %v", ed, err)
	}
	del, err := f.off.Delete(ctx, f.ada, root.ID)
	if err != nil || !del.Deleted || del.Body != "" {
		t.Errorf("Delete = %+v, %v", del, err)
	}
	_, err = f.off.Edit(ctx, f.ada, root.ID, "again")
	wantCode(t, "edit a deleted message", err, bullpen.ENOTFOUND)
	revs, err := f.db.MessageRevisions(ctx, root.ID)
	if want := []string{"hey @lead, see `@pm` and mail x@y.z", "edited @pm"}; err != nil || !reflect.DeepEqual(revs, want) {
		t.Errorf("MessageRevisions = %q, %v; want %q", revs, err, want)
	}

	// Cursor pagination over 25 more messages, 10 at a time.
	var want []int64
	for i := 0; i < 25; i++ {
		want = append(want, mustPost(t, f.off, f.ada, other.ID, fmt.Sprintf("m%d", i)).ID)
	}
	var got []int64
	cursor := ""
	for pages := 0; ; pages++ {
		page, err := f.off.ListMessages(ctx, f.ada, other.ID, cursor, 10)
		if err != nil || pages > 5 {
			t.Fatalf("ListMessages(cursor %q) = %v (page %d)", cursor, err, pages)
		}
		ids := []int64{}
		for _, m := range page.Items {
			ids = append(ids, m.ID)
		}
		got = append(ids, got...)
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paged IDs = %v, want %v", got, want)
	}
	_, err = f.off.ListMessages(ctx, f.ada, other.ID, "abc", 10)
	wantCode(t, "bad cursor", err, bullpen.EINVALID)
	_, err = f.off.ListMessages(ctx, f.ada, other.ID, "", 500)
	wantCode(t, "limit over 200", err, bullpen.EINVALID)
}

func testEvents(t *testing.T, f *fixture) {
	ctx := context.Background()
	before := f.off.Hub().Last()
	msg := mustPost(t, f.off, f.ada, f.general.ID, "hello")
	dm, _ := f.off.OpenDM(ctx, f.admin, f.lead.ID)
	mustPost(t, f.off, f.lead, dm.ID, "secret")

	evs, err := f.off.Events(ctx, f.admin, before, 100)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for i, ev := range evs {
		types = append(types, ev.Type)
		if i > 0 && ev.Seq <= evs[i-1].Seq {
			t.Errorf("event seq %d after %d: not increasing", ev.Seq, evs[i-1].Seq)
		}
	}
	want := []string{bullpen.EventMessagePosted, bullpen.EventChannelCreated, bullpen.EventMessagePosted}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("event types = %v, want %v", types, want)
	}
	var posted bullpen.Message
	if err := json.Unmarshal(evs[0].Payload, &posted); err != nil || posted.ID != msg.ID || posted.Body != "hello" {
		t.Errorf("message.posted payload = %s (%v)", evs[0].Payload, err)
	}
	adaEvents, _ := f.off.Events(ctx, f.ada, before, 100)
	if len(adaEvents) != 1 {
		t.Errorf("ada sees %d events, want 1 (not the DM's)", len(adaEvents))
	}
	_, err = f.off.Events(ctx, f.admin, -1, 10)
	wantCode(t, "negative since", err, bullpen.EINVALID)
}

func testTokens(t *testing.T, f *fixture) {
	ctx := context.Background()
	secret, tok, err := f.off.CreateToken(ctx, f.ada, 0, "laptop")
	if err != nil || tok.MemberID != f.ada.ID {
		t.Fatalf("CreateToken = %+v, %v", tok, err)
	}
	if m, err := f.off.Authenticate(ctx, secret); err != nil || m.ID != f.ada.ID {
		t.Errorf("Authenticate(new token) = %+v, %v", m, err)
	}
	_, _, err = f.off.CreateToken(ctx, f.ada, f.lead.ID, "steal")
	wantCode(t, "non-admin token for another", err, bullpen.EFORBIDDEN)
	if _, _, err = f.off.CreateToken(ctx, f.admin, f.lead.ID, "agent"); err != nil {
		t.Errorf("admin creates agent token: %v", err)
	}
	wantCode(t, "revoke someone else's token", f.off.RevokeToken(ctx, f.lead, tok.ID), bullpen.ENOTFOUND)
	if err := f.off.RevokeToken(ctx, f.ada, tok.ID); err != nil {
		t.Fatalf("RevokeToken: %v", err)
	}
	_, err = f.off.Authenticate(ctx, secret)
	wantCode(t, "revoked token", err, bullpen.EUNAUTHORIZED)
	_, err = f.off.Authenticate(ctx, "bp_nope")
	wantCode(t, "unknown token", err, bullpen.EUNAUTHORIZED)

	m, cookie, csrf, err := f.off.Login(ctx, f.adminToken)
	if err != nil || m.ID != f.admin.ID || cookie == "" || csrf == "" {
		t.Fatalf("Login = %v", err)
	}
	if sm, scsrf, err := f.off.Session(ctx, cookie); err != nil || sm.ID != f.admin.ID || scsrf != csrf {
		t.Errorf("Session = %+v, %q, %v", sm, scsrf, err)
	}
	if err := bullpen.CheckCSRF(csrf, "wrong"); bullpen.ErrorCode(err) != bullpen.EFORBIDDEN {
		t.Errorf("bullpen.CheckCSRF(wrong) = %v", err)
	}
	f.off.Logout(ctx, cookie)
	_, _, err = f.off.Session(ctx, cookie)
	wantCode(t, "session after logout", err, bullpen.EUNAUTHORIZED)
}
