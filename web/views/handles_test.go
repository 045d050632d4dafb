package views

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// Wherever a member's name shows, the @handle shows beside it: display
// names are free text, so a second "Ada Lovelace" must be told apart.
func TestHandleBesideEveryName(t *testing.T) {
	p := sampleDashboard()
	p.Members = append(p.Members, MemberItem{ID: 10, Handle: "mallory", DisplayName: "Ada Lovelace", Kind: KindHuman})
	p.Messages = append(p.Messages, MessageItem{ID: 14, ChannelID: 2, AuthorID: 10, AuthorHandle: "mallory",
		AuthorName: "Ada Lovelace", AuthorKind: KindHuman, CreatedAt: sampleTime})
	doc, _ := renderDoc(t, Dashboard(p))

	members := doc.Find(byTestID("member-list") + " " + byTestID("member"))
	if members.Length() != len(p.Members) {
		t.Fatalf("member rows = %d, want %d", members.Length(), len(p.Members))
	}
	members.Each(func(i int, m *goquery.Selection) {
		if got, want := m.Find(byTestID("member-handle")).Text(), "@"+p.Members[i].Handle; got != want {
			t.Errorf("member row %q shows handle %q, want %q", m.Find(byTestID("member-name")).Text(), got, want)
		}
	})
	doc.Find(byTestID("message-list") + " " + byTestID("message")).Each(func(_ int, m *goquery.Selection) {
		if h := m.Find(byTestID("message-handle")).Text(); !strings.HasPrefix(h, "@") || len(h) < 3 {
			t.Errorf("message by %q shows handle %q", m.Find(byTestID("message-author")).Text(), h)
		}
	})
	if got := doc.Find(byTestID("dm-link") + " " + byTestID("dm-handle")).Text(); got != "@lead" {
		t.Errorf("DM link handle = %q, want @lead", got)
	}
	if got := doc.Find(byTestID("me") + " .me-handle").Text(); got != "@ada" {
		t.Errorf("me handle = %q, want @ada", got)
	}

	// A DM's header, title and composer name the other member with the handle.
	p.Current = p.DMs[0]
	doc, _ = renderDoc(t, Dashboard(p))
	header := doc.Find(byTestID("channel-name"))
	if got := header.Find(byTestID("channel-handle")).Text(); got != "@lead" {
		t.Errorf("DM header handle = %q, want @lead", got)
	}
	if got := strings.Join(strings.Fields(header.Text()), " "); got != "Lead @lead" {
		t.Errorf("DM header = %q, want \"Lead @lead\" (no '@' before the display name)", got)
	}
	if got := doc.Find("title").Text(); !strings.HasPrefix(got, "Lead (@lead) · ") {
		t.Errorf("DM page title = %q, want it to start with \"Lead (@lead) · \"", got)
	}
	if got, _ := doc.Find(byTestID("composer-input")).Attr("placeholder"); got != "Message Lead (@lead)" {
		t.Errorf("DM composer placeholder = %q", got)
	}
}
