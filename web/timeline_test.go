package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"github.com/bullpen-hq/bullpen/timeline"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/wiki"
)

// eventsPage is GET /api/v1/events.
type eventsPage struct {
	Items []struct {
		bullpen.Event
		Line    string `json:"line"`
		Link    string `json:"link"`
		Actor   string `json:"actor"`
		Channel string `json:"channel"`
	} `json:"items"`
	NextBefore int64 `json:"next_before"`
}

func newTimelineServer(t *testing.T, dialect string) *testServer {
	t.Helper()
	db, off, token := openOffice(t, dialect)
	return serve(t, db, off, token, web.Config{}, web.Services{Office: off, Wiki: wiki.New(db, wiki.Config{}), Timeline: timeline.Lines{}})
}

// officeWithTraffic: mallory and bob (humans), #launch, messages in
// #general and #launch, and a DM between the admin and mallory.
type traffic struct {
	admin, mallory, bob bullpen.Member
	general, launch, dm bullpen.Channel
}

func makeTraffic(t *testing.T, ts *testServer) traffic {
	t.Helper()
	ctx := context.Background()
	var tr traffic
	var err error
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	tr.admin, err = ts.Off.Authenticate(ctx, ts.Token)
	must(err)
	tr.mallory, err = ts.Off.CreateMember(ctx, tr.admin, bullpen.MemberInput{Handle: "mallory", DisplayName: "Mallory", Kind: bullpen.KindHuman})
	must(err)
	tr.bob, err = ts.Off.CreateMember(ctx, tr.admin, bullpen.MemberInput{Handle: "bob", DisplayName: "Bob", Kind: bullpen.KindHuman})
	must(err)
	tr.general, err = ts.Off.ChannelByName(ctx, tr.admin, bullpen.GeneralChannel)
	must(err)
	tr.launch, err = ts.Off.CreateChannel(ctx, tr.admin, bullpen.ChannelInput{Name: "launch"})
	must(err)
	post := func(who bullpen.Member, ch bullpen.Channel, body string) {
		t.Helper()
		_, err := ts.Off.Post(ctx, who, bullpen.PostInput{ChannelID: ch.ID, Body: body})
		must(err)
	}
	for i := range 7 {
		post(tr.admin, tr.general, fmt.Sprintf("general %d", i))
	}
	for i := range 3 {
		post(tr.mallory, tr.launch, fmt.Sprintf("launch %d", i))
	}
	tr.dm, err = ts.Off.OpenDM(ctx, tr.admin, tr.mallory.ID)
	must(err)
	post(tr.admin, tr.dm, "psst")
	return tr
}

// TestEventsPagesBackwards pages the whole log newest first on both
// databases: every event once, in order, with lines, and next_before 0
// at the end; forwards (after= and since=) still works as before.
func TestEventsPagesBackwards(t *testing.T) {
	for _, dialect := range storetest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			ts := newTimelineServer(t, dialect)
			makeTraffic(t, ts)
			var all eventsPage
			if st := ts.do("GET", "/api/v1/events?since=0&limit=1000", ts.Token, nil, &all); st != 200 || len(all.Items) < 20 {
				t.Fatalf("GET events forwards = %d, %d items", st, len(all.Items))
			}
			var seen []int64
			before := int64(1 << 40)
			for pages := 0; before != 0; pages++ {
				if pages > 20 {
					t.Fatal("pagination does not end")
				}
				var p eventsPage
				if st := ts.do("GET", fmt.Sprintf("/api/v1/events?before=%d&limit=6", before), ts.Token, nil, &p); st != 200 {
					t.Fatalf("page before %d: status %d", before, st)
				}
				for _, it := range p.Items {
					if it.Line == "" || it.Line == it.Type {
						t.Errorf("event %d %s has no line", it.Seq, it.Type)
					}
					seen = append(seen, it.Seq)
				}
				if p.NextBefore != 0 && (len(p.Items) != 6 || p.NextBefore != p.Items[5].Seq) {
					t.Errorf("next_before = %d after %d items", p.NextBefore, len(p.Items))
				}
				before = p.NextBefore
			}
			if len(seen) != len(all.Items) {
				t.Fatalf("paged %d events, the log has %d", len(seen), len(all.Items))
			}
			for i, s := range seen {
				if want := all.Items[len(all.Items)-1-i].Seq; s != want {
					t.Fatalf("page order: item %d is seq %d, want %d", i, s, want)
				}
			}
			var fwd eventsPage
			ts.do("GET", fmt.Sprintf("/api/v1/events?after=%d&limit=3", all.Items[4].Seq), ts.Token, nil, &fwd)
			if len(fwd.Items) != 3 || fwd.Items[0].Seq != all.Items[5].Seq || fwd.NextBefore != 0 {
				t.Errorf("after= page = %+v, want the 3 events after item 4 in order", fwd)
			}
		})
	}
}

// TestEventsFilters: agent, channel and kind narrow the log, combine, and
// keep to what the reader may see.
func TestEventsFilters(t *testing.T) {
	for _, dialect := range storetest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			ts := newTimelineServer(t, dialect)
			tr := makeTraffic(t, ts)
			bobTok, _, err := ts.Off.CreateToken(context.Background(), tr.admin, tr.bob.ID, "bob")
			if err != nil {
				t.Fatal(err)
			}
			get := func(tok, q string) eventsPage {
				t.Helper()
				var p eventsPage
				if st := ts.do("GET", "/api/v1/events?before=999999&"+q, tok, nil, &p); st != 200 {
					t.Fatalf("GET events?%s = %d", q, st)
				}
				return p
			}
			check := func(name string, p eventsPage, n int, ok func(it bullpen.Event) bool) {
				t.Helper()
				if n >= 0 && len(p.Items) != n {
					t.Errorf("%s: %d items, want %d", name, len(p.Items), n)
				}
				for _, it := range p.Items {
					if !ok(it.Event) {
						t.Errorf("%s: unexpected event %d %s channel %d actor %d", name, it.Seq, it.Type, it.ChannelID, it.ActorID)
					}
				}
			}
			launch := func(ev bullpen.Event) bool { return ev.ChannelID == tr.launch.ID }
			check("channel=launch", get(ts.Token, "channel=launch"), -1, launch)
			check("channel=ID", get(ts.Token, "channel="+itoa(tr.launch.ID)), len(get(ts.Token, "channel=launch").Items), launch)
			posted := func(ev bullpen.Event) bool { return ev.Type == bullpen.EventMessagePosted }
			check("kind=message.posted", get(ts.Token, "kind=message.posted"), 11, posted)
			check("kind=message", get(ts.Token, "kind=message"), 11, func(ev bullpen.Event) bool { return strings.HasPrefix(ev.Type, "message.") })
			check("kind list", get(ts.Token, "kind=channel.created,member.created"), -1, func(ev bullpen.Event) bool {
				return ev.Type == bullpen.EventChannelCreated || ev.Type == bullpen.EventMemberCreated
			})
			byMallory := func(ev bullpen.Event) bool { return ev.ActorID == tr.mallory.ID }
			check("agent=mallory", get(ts.Token, "agent=mallory"), -1, byMallory)
			check("agent=@mallory&kind&channel", get(ts.Token, "agent=@mallory&kind=message.posted&channel=launch"), 3,
				func(ev bullpen.Event) bool { return byMallory(ev) && posted(ev) && launch(ev) })
			check("agent=ID&limit", get(ts.Token, "agent="+itoa(tr.mallory.ID)+"&kind=message.posted&limit=2"), 2, byMallory)
			// bob may not see the DM: not in his pages, not by filter.
			check("bob's log", get(bobTok, "limit=1000"), -1, func(ev bullpen.Event) bool { return ev.ChannelID != tr.dm.ID })
			var e apiError
			if st := ts.do("GET", "/api/v1/events?before=999999&channel="+itoa(tr.dm.ID), bobTok, nil, &e); st != 400 {
				t.Errorf("bob filters on the DM: %d, want 400", st)
			}
			if n := len(get(ts.Token, "channel="+itoa(tr.dm.ID)).Items); n == 0 {
				t.Error("the admin sees no DM events")
			}
		})
	}
}

// TestEventsBadFilters: each bad value is a 400 that says what is wrong.
func TestEventsBadFilters(t *testing.T) {
	ts := newTimelineServer(t, store.SQLite)
	makeTraffic(t, ts)
	for _, c := range []struct{ name, query, want string }{
		{"before not a number", "before=abc", "before must be an integer"},
		{"negative before", "before=-5", "before must not be negative"},
		{"negative after", "after=-1", "after must not be negative"},
		{"negative since", "since=-1", "since must not be negative"},
		{"after and since differ", "after=5&since=6", "give one"},
		{"empty range", "after=5&before=6", "must be more than"},
		{"limit zero", "limit=0", "limit must be between 1 and 1000"},
		{"limit too big", "before=10&limit=1001", "limit must be between 1 and 1000"},
		{"unknown handle", "agent=nobody", `agent "nobody"`},
		{"unknown member id", "agent=999", "agent 999"},
		{"unknown channel", "channel=nope", `channel "nope" not found`},
		{"unknown channel id", "channel=999", "channel 999 not found"},
		{"unknown kind", "kind=message.sent", `kind "message.sent" is not an event kind`},
		{"kind with bad characters", "kind=Message!", `kind "Message!"`},
	} {
		var e apiError
		st := ts.do("GET", "/api/v1/events?"+c.query, ts.Token, nil, &e)
		if st != http.StatusBadRequest || !strings.Contains(e.Error.Message, c.want) {
			t.Errorf("%s (%s): %d %q, want 400 containing %q", c.name, c.query, st, e.Error.Message, c.want)
		}
	}
}

// TestTimelineOnThePage: the dashboard renders the timeline's first page
// with the URL's filters, and a bad filter shows in the Activity tab as an
// error instead of failing the page.
func TestTimelineOnThePage(t *testing.T) {
	ts := newTimelineServer(t, store.SQLite)
	makeTraffic(t, ts)
	b := ts.login(ts.Token)
	get := func(path string) string {
		t.Helper()
		resp, err := b.client.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s = %d", path, resp.StatusCode)
		}
		return string(body)
	}
	page := get("/c/general?agent=mallory&kind=message.posted")
	if n := strings.Count(page, `data-testid="timeline-entry"`); n != 3 {
		t.Errorf("filtered first page has %d entries, want mallory's 3 posts", n)
	}
	if !strings.Contains(page, "@mallory posted in #launch: “launch 2”") {
		t.Error("the page lacks mallory's newest post as a line")
	}
	page = get("/c/general?kind=bogus")
	if !strings.Contains(page, `kind &#34;bogus&#34; is not an event kind`) || strings.Contains(page, `data-testid="timeline-entry"`) {
		t.Errorf("a bad filter does not show as the tab's error")
	}
}

// TestLatestRepliesAPI: the newest replies of the roots asked for, in one
// answer; bad roots are a 400; a channel the caller may not see is a 404.
func TestLatestRepliesAPI(t *testing.T) {
	ts := newTimelineServer(t, store.SQLite)
	tr := makeTraffic(t, ts)
	ctx := context.Background()
	root, err := ts.Off.Post(ctx, tr.admin, bullpen.PostInput{ChannelID: tr.general.ID, Body: "root"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := ts.Off.Post(ctx, tr.mallory, bullpen.PostInput{ChannelID: tr.general.ID, ThreadID: root.ID, Body: fmt.Sprintf("answer %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var got struct{ Items []bullpen.Message }
	path := fmt.Sprintf("/api/v1/channels/%d/latest-replies?roots=%d&per_root=2", tr.general.ID, root.ID)
	if st := ts.do("GET", path, ts.Token, nil, &got); st != 200 || len(got.Items) != 2 ||
		got.Items[0].Body != "answer 1" || got.Items[1].Body != "answer 2" || got.Items[1].HTML == "" || got.Items[1].Author == nil {
		t.Fatalf("latest replies = %d %+v", st, got.Items)
	}
	for _, q := range []string{"roots=", "roots=x", "roots=-1", "roots=1&per_root=11", "roots=" + strings.Repeat("1,", 200) + "1"} {
		var e apiError
		if st := ts.do("GET", fmt.Sprintf("/api/v1/channels/%d/latest-replies?%s", tr.general.ID, q), ts.Token, nil, &e); st != 400 || e.Error.Message == "" {
			t.Errorf("?%s = %d %q, want 400", q, st, e.Error.Message)
		}
	}
	bobTok, _, err := ts.Off.CreateToken(ctx, tr.admin, tr.bob.ID, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if st := ts.do("GET", fmt.Sprintf("/api/v1/channels/%d/latest-replies?roots=1", tr.dm.ID), bobTok, nil, nil); st != 404 {
		t.Errorf("bob reads the DM's replies: %d, want 404", st)
	}
}
