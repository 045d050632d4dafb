package views

import (
	"bytes"
	"context"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
)

// renderDoc renders c and parses the result.
func renderDoc(t *testing.T, c templ.Component) (*goquery.Document, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatalf("Render() error = %v", err)
	}
	html := buf.String()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		t.Fatalf("parse rendered HTML: %v", err)
	}
	return doc, html
}

// byTestID selects on data-testid.
func byTestID(id string) string { return `[data-testid="` + id + `"]` }

var sampleTime = time.Date(2026, 3, 4, 9, 30, 0, 0, time.UTC)

// sampleDashboard is a realistic page: a few channels, people and agents,
// a thread, an edited and a deleted message, markdown-rendered HTML.
func sampleDashboard() DashboardPage {
	general := ChannelItem{ID: 2, Name: "general", Kind: ChannelPublic, Topic: "Company-wide chatter and launch plans", Joined: true}
	return DashboardPage{
		Office: "Acme Office",
		CSRF:   "csrf-token-123",
		Me:     MemberItem{ID: 1, Handle: "ada", DisplayName: "Ada Lovelace", Kind: KindHuman, Title: "Founder"},
		Channels: []ChannelItem{
			general,
			{ID: 3, Name: "engineering", Kind: ChannelPublic, Topic: "Build things", Joined: true, Unread: 4},
			{ID: 4, Name: "design", Kind: ChannelPublic, Joined: false},
		},
		DMs: []ChannelItem{
			{ID: 7, Name: "dm-1-5", Label: "Lead", LabelHandles: "@lead", Kind: ChannelDM, Joined: true, Unread: 1},
		},
		Members: []MemberItem{
			{ID: 1, Handle: "ada", DisplayName: "Ada Lovelace", Kind: KindHuman, Title: "Founder"},
			{ID: 5, Handle: "lead", DisplayName: "Lead", Kind: KindAgent, Title: "Team lead"},
			{ID: 6, Handle: "eng", DisplayName: "Engineer", Kind: KindAgent, Title: "Software engineer"},
			{ID: 8, Handle: "pm", DisplayName: "PM", Kind: KindAgent, Title: "Product manager", Muted: true},
			{ID: 9, Handle: "grace", DisplayName: "Grace Hopper", Kind: KindHuman},
		},
		Current: general,
		Messages: []MessageItem{
			{ID: 10, ChannelID: 2, AuthorID: 1, AuthorHandle: "ada", AuthorName: "Ada Lovelace", AuthorKind: KindHuman,
				HTML: template.HTML(`<p>Morning! <span class="mention">@lead</span> can we ship the launch page today?</p>`), CreatedAt: sampleTime, ReplyCount: 2,
				Replies: []ReplyItem{
					{ID: 20, AuthorHandle: "lead", AuthorName: "Lead", AuthorKind: KindAgent, HTML: template.HTML(`<p>first reply</p>`)},
					{ID: 21, AuthorHandle: "eng", AuthorName: "Engineer", AuthorKind: KindAgent, HTML: template.HTML(`<p>Yes: <code>make test</code> passes, shipping at 5.</p>`)},
				}},
			{ID: 11, ChannelID: 2, AuthorID: 5, AuthorHandle: "lead", AuthorName: "Lead", AuthorKind: KindAgent,
				HTML: template.HTML(`<p>Yes. Plan:</p><ol><li>PM writes copy</li><li>Engineer builds it</li></ol><p>Here is the check we run:</p><pre><code>go test -race ./...</code></pre>`), CreatedAt: sampleTime.Add(time.Minute), Edited: true},
			{ID: 12, ChannelID: 2, AuthorID: 9, AuthorHandle: "grace", AuthorName: "Grace Hopper", AuthorKind: KindHuman,
				CreatedAt: sampleTime.Add(2 * time.Minute), Deleted: true},
			{ID: 13, ChannelID: 2, AuthorID: 6, AuthorHandle: "eng", AuthorName: "Engineer", AuthorKind: KindAgent,
				HTML: template.HTML(`<p>On it. I will use <code>static/app.css</code> and post a preview.</p>`), CreatedAt: sampleTime.Add(3 * time.Minute), ReplyCount: 1},
		},
		HasOlder:       true,
		OlderCursor:    "c-10",
		LastSeq:        42,
		ProviderNotice: "Agents here run on the scripted provider: a simulation, not a real model.",
		Timeline: TimelineView{After: 42, NextBefore: 38, Kinds: []KindOption{{Value: "message", Label: "Messages"}, {Value: "wiki", Label: "Wiki edits"}},
			Members: []MemberItem{{ID: 5, Handle: "lead"}, {ID: 6, Handle: "eng"}}, Channels: []ChannelItem{general},
			Entries: []TimelineEntry{
				{Seq: 42, At: sampleTime.Add(4 * time.Minute), Kind: "sandbox.exec_finished", Line: "@eng ran `df -h` → exit 0 in 12 ms", Link: "#sandbox/sb_1/exec/x_1", Actor: "eng"},
				{Seq: 41, At: sampleTime.Add(3 * time.Minute), Kind: "wiki.page_saved", Line: "@pm edited [[Launch plan]] (+12 −3)", Link: "#wiki-diff/launch-plan/4", Actor: "pm"},
				{Seq: 40, At: sampleTime.Add(2 * time.Minute), Kind: "agent.limit_reached", Line: "@lead stopped: hop budget (6) reached in thread 10", Link: "/c/general#thread-10", Actor: "lead"},
				{Seq: 39, At: sampleTime.Add(time.Minute), Kind: "agent.turn_started", Line: "@eng started a turn (mentioned in #general)", Link: "/turns/7", Actor: "eng"},
				{Seq: 38, At: sampleTime, Kind: "member.created", Line: "Grace Hopper (@grace), human, joined the office"},
			}},
	}
}

// TestWriteSnapshot writes the sample dashboard to the file named by
// BULLPEN_VIEWS_SNAPSHOT, with /static/ pointing at this checkout, to look
// at in a browser (file://). It is skipped otherwise.
func TestWriteSnapshot(t *testing.T) {
	out := os.Getenv("BULLPEN_VIEWS_SNAPSHOT")
	if out == "" {
		t.Skip("BULLPEN_VIEWS_SNAPSHOT not set")
	}
	dir, err := filepath.Abs("../../static")
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]templ.Component{
		"":       Dashboard(sampleDashboard()),
		"-login": Login(LoginPage{CSRF: "x", Error: "That token is not valid."}),
		"-error": Error(ErrorPage{Status: 404, Code: "not_found", Message: "No channel named #nope."}),
	}
	for suffix, c := range pages {
		_, html := renderDoc(t, c)
		html = strings.ReplaceAll(html, `"/static/`, `"file://`+dir+`/`)
		name := strings.TrimSuffix(out, ".html") + suffix + ".html"
		if err := os.WriteFile(name, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
