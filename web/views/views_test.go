package views

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func TestLogin(t *testing.T) {
	tests := []struct {
		name      string
		page      LoginPage
		wantError bool
		wantNext  bool
	}{
		{name: "plain", page: LoginPage{CSRF: "tok"}},
		{name: "error and next", page: LoginPage{CSRF: "tok", Error: "That token is not valid.", Next: "/c/general"}, wantError: true, wantNext: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, _ := renderDoc(t, Login(tt.page))
			form := doc.Find(byTestID("login-form"))
			if got, _ := form.Attr("action"); got != "/login" {
				t.Errorf("form action = %q, want /login", got)
			}
			if got, _ := form.Attr("method"); got != "post" {
				t.Errorf("form method = %q, want post", got)
			}
			if got, _ := form.Find(byTestID("login-token")).Attr("name"); got != "token" {
				t.Errorf("token input name = %q, want token", got)
			}
			if form.Find(byTestID("login-submit")).Length() != 1 {
				t.Error("no login-submit button")
			}
			if got, _ := form.Find(`input[name="_csrf"]`).Attr("value"); got != "tok" {
				t.Errorf("_csrf = %q, want tok", got)
			}
			if got := doc.Find(byTestID("login-error")).Length() == 1; got != tt.wantError {
				t.Errorf("login-error shown = %v, want %v", got, tt.wantError)
			}
			if tt.wantError && doc.Find(byTestID("login-error")).Text() != tt.page.Error {
				t.Errorf("login-error = %q, want %q", doc.Find(byTestID("login-error")).Text(), tt.page.Error)
			}
			next, ok := form.Find(`input[name="next"]`).Attr("value")
			if ok != tt.wantNext || (ok && next != tt.page.Next) {
				t.Errorf("next = %q (present %v), want %q (present %v)", next, ok, tt.page.Next, tt.wantNext)
			}
			if doc.Find(`script[src*="app.js"]`).Length() != 0 {
				t.Error("login page loads app.js, want no script")
			}
		})
	}
}

func TestError(t *testing.T) {
	doc, _ := renderDoc(t, Error(ErrorPage{Status: 404, Code: "not_found", Message: "No channel named #nope."}))
	for id, want := range map[string]string{
		"error-status":  "404",
		"error-code":    "not_found",
		"error-message": "No channel named #nope.",
	} {
		if got := strings.TrimSpace(doc.Find(byTestID(id)).Text()); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	if got := doc.Find("h1").Text(); got != "Not Found" {
		t.Errorf("h1 = %q, want Not Found", got)
	}
	doc, _ = renderDoc(t, Error(ErrorPage{Status: 599}))
	if got := doc.Find("h1").Text(); got != "Something went wrong" {
		t.Errorf("h1 for unknown status = %q, want Something went wrong", got)
	}
}

func TestDashboardShell(t *testing.T) {
	p := sampleDashboard()
	doc, _ := renderDoc(t, Dashboard(p))
	if got, _ := doc.Find(`meta[name="csrf-token"]`).Attr("content"); got != p.CSRF {
		t.Errorf("csrf meta = %q, want %q", got, p.CSRF)
	}
	body := doc.Find("body")
	for attr, want := range map[string]string{
		"data-channel-id":   "2",
		"data-channel-name": "general",
		"data-last-seq":     "42",
		"data-me-id":        "1",
	} {
		if got, _ := body.Attr(attr); got != want {
			t.Errorf("body %s = %q, want %q", attr, got, want)
		}
	}
	if doc.Find(`script[src^="/static/app.js?v="]`).Length() != 1 {
		t.Error("app.js is not loaded with a version")
	}
	if got := doc.Find(byTestID("office-name")).Text(); got != "Acme Office" {
		t.Errorf("office-name = %q", got)
	}
	logout := doc.Find(byTestID("logout-form"))
	if a, _ := logout.Attr("action"); a != "/logout" {
		t.Errorf("logout action = %q, want /logout", a)
	}
	if v, _ := logout.Find(`input[name="_csrf"]`).Attr("value"); v != p.CSRF {
		t.Errorf("logout _csrf = %q, want %q", v, p.CSRF)
	}
	if doc.Find(byTestID("new-channel-form")+" "+byTestID("new-channel-name")).Length() != 1 {
		t.Error("no new-channel form with a name input")
	}
	if got := strings.TrimSpace(doc.Find(byTestID("provider-notice")).Text()); got != p.ProviderNotice {
		t.Errorf("provider-notice = %q, want %q", got, p.ProviderNotice)
	}
	if _, hidden := doc.Find(byTestID("thread-pane")).Attr("hidden"); !hidden {
		t.Error("thread-pane is not hidden at load")
	}
	for _, id := range []string{"composer-input", "composer-send", "thread-input", "thread-send", "conn-status"} {
		if doc.Find(byTestID(id)).Length() != 1 {
			t.Errorf("%s: found %d, want 1", id, doc.Find(byTestID(id)).Length())
		}
	}
}

func TestDashboardSidebar(t *testing.T) {
	doc, _ := renderDoc(t, Dashboard(sampleDashboard()))
	links := doc.Find(byTestID("channel-list") + " " + byTestID("channel-link"))
	if links.Length() != 3 {
		t.Fatalf("channel links = %d, want 3", links.Length())
	}
	first := links.First()
	if href, _ := first.Attr("href"); href != "/c/general" {
		t.Errorf("first channel href = %q, want /c/general", href)
	}
	if cur, _ := first.Attr("aria-current"); cur != "page" {
		t.Errorf("current channel aria-current = %q, want page", cur)
	}
	eng := links.Eq(1)
	if _, hidden := eng.Find(byTestID("channel-unread")).Attr("hidden"); hidden || eng.Find(byTestID("channel-unread")).Text() != "4" {
		t.Errorf("engineering unread badge = %q (hidden %v), want 4 shown", eng.Find(byTestID("channel-unread")).Text(), hidden)
	}
	if _, hidden := first.Find(byTestID("channel-unread")).Attr("hidden"); !hidden {
		t.Error("general unread badge shown with 0 unread")
	}
	if !links.Eq(2).HasClass("not-joined") {
		t.Error("design (not joined) lacks class not-joined")
	}
	dm := doc.Find(byTestID("dm-list") + " " + byTestID("dm-link"))
	if got := dm.Find(".channel-name").Text(); got != "Lead" {
		t.Errorf("dm label = %q, want Lead", got)
	}
	if href, _ := dm.Attr("href"); href != "/c/dm-1-5" {
		t.Errorf("dm href = %q, want /c/dm-1-5", href)
	}

	members := doc.Find(byTestID("member-list") + " " + byTestID("member"))
	if members.Length() != 5 {
		t.Fatalf("members = %d, want 5", members.Length())
	}
	members.Each(func(_ int, m *goquery.Selection) {
		kind, _ := m.Attr("data-kind")
		if got := m.Find(byTestID("member-kind-badge")).Text(); got != kind {
			t.Errorf("member %s badge = %q, want %q", m.Find(byTestID("member-name")).Text(), got, kind)
		}
		hasStatus := m.Find(byTestID("member-status")+"[data-status]").Length() == 1
		if hasStatus != (kind == KindAgent) {
			t.Errorf("member %s (%s) status dot = %v", m.Find(byTestID("member-name")).Text(), kind, hasStatus)
		}
	})
	if got := doc.Find(byTestID("member-muted")).Length(); got != 1 {
		t.Errorf("muted badges = %d, want 1", got)
	}
}

func TestDashboardMessages(t *testing.T) {
	doc, _ := renderDoc(t, Dashboard(sampleDashboard()))
	msgs := doc.Find(byTestID("message-list") + " " + byTestID("message"))
	if msgs.Length() != 4 {
		t.Fatalf("messages = %d, want 4", msgs.Length())
	}
	ids := msgs.Map(func(_ int, s *goquery.Selection) string { v, _ := s.Attr("data-id"); return v })
	if strings.Join(ids, ",") != "10,11,12,13" {
		t.Errorf("message ids = %v, want 10,11,12,13", ids)
	}
	first := msgs.Eq(0)
	if got := first.Find(byTestID("message-author")).Text(); got != "Ada Lovelace" {
		t.Errorf("author = %q", got)
	}
	if got := first.Find(byTestID("message-handle")).Text(); got != "@ada" {
		t.Errorf("handle = %q", got)
	}
	if first.Find(byTestID("message-kind-badge")).Length() != 0 {
		t.Error("human message has an agent badge")
	}
	if got := first.Find(byTestID("message-body") + " .mention").Text(); got != "@lead" {
		t.Errorf("raw HTML not inserted: mention = %q", got)
	}
	if dt, _ := first.Find(byTestID("message-time")).Attr("datetime"); dt != "2026-03-04T09:30:00Z" {
		t.Errorf("time datetime = %q", dt)
	}
	replies := first.Find(byTestID("message-replies"))
	if _, hidden := replies.Attr("hidden"); hidden || replies.Text() != "2 replies" {
		t.Errorf("reply link = %q (hidden %v), want 2 replies", replies.Text(), hidden)
	}
	if open, _ := replies.Attr("data-thread-open"); open != "10" {
		t.Errorf("reply link data-thread-open = %q, want 10", open)
	}

	agent := msgs.Eq(1)
	if agent.Find(byTestID("message-kind-badge")).Text() != "agent" {
		t.Error("agent message lacks the agent badge")
	}
	if agent.Find(byTestID("message-edited")).Length() != 1 {
		t.Error("edited message lacks the edited marker")
	}
	if agent.Find(byTestID("message-body")+" pre code").Length() != 1 {
		t.Error("code block missing")
	}
	if _, hidden := agent.Find(byTestID("message-replies")).Attr("hidden"); !hidden {
		t.Error("reply link shown for 0 replies")
	}

	deleted := msgs.Eq(2)
	if got := deleted.Find(byTestID("message-deleted")).Text(); got != "message deleted" {
		t.Errorf("deleted message text = %q", got)
	}
	if deleted.Find(byTestID("message-body")).Length() != 0 || deleted.Find(byTestID("message-reply")).Length() != 0 {
		t.Error("deleted message has a body or a reply button")
	}

	older := doc.Find(byTestID("load-older"))
	if c, _ := older.Attr("data-cursor"); c != "c-10" {
		t.Errorf("load-older cursor = %q, want c-10", c)
	}
	if _, hidden := older.Attr("hidden"); hidden {
		t.Error("load-older hidden although HasOlder")
	}
	if _, hidden := doc.Find(byTestID("message-empty")).Attr("hidden"); !hidden {
		t.Error("empty-channel line shown with messages")
	}
}

func TestDashboardNoChannel(t *testing.T) {
	p := sampleDashboard()
	p.Current, p.Messages, p.HasOlder = ChannelItem{}, nil, false
	doc, _ := renderDoc(t, Dashboard(p))
	if doc.Find(byTestID("no-channel")).Length() != 1 {
		t.Error("no-channel empty state missing")
	}
	if doc.Find(byTestID("composer")).Length() != 0 {
		t.Error("composer shown without a channel")
	}
	if got, _ := doc.Find("body").Attr("data-channel-id"); got != "0" {
		t.Errorf("data-channel-id = %q, want 0", got)
	}
}

func TestDashboardPanels(t *testing.T) {
	doc, _ := renderDoc(t, Dashboard(sampleDashboard()))
	for i, id := range []string{"activity", "wiki", "sandboxes", "agents"} {
		tab := doc.Find(byTestID("panel-tab-" + id))
		if tab.Length() != 1 {
			t.Errorf("panel-tab-%s missing", id)
			continue
		}
		if got, _ := tab.Attr("aria-selected"); got != boolAttr(i == 0) {
			t.Errorf("panel-tab-%s aria-selected = %q", id, got)
		}
		sec := doc.Find(`section[data-panel="` + id + `"]`)
		if sec.Length() != 1 {
			t.Errorf("section data-panel=%s missing", id)
		}
		if _, hidden := sec.Attr("hidden"); hidden != (i != 0) {
			t.Errorf("section %s hidden = %v", id, hidden)
		}
	}
	if doc.Find(`[data-panel="activity"] `+byTestID("timeline")).Length() != 1 {
		t.Error("timeline missing from the Activity tab")
	}
}

// TestEscaping checks that names, topics and labels from users and agents
// are escaped: only MessageItem.HTML is inserted raw.
func TestEscaping(t *testing.T) {
	const evil = `<script>alert("x")</script><img src=x onerror=alert(1)>`
	p := sampleDashboard()
	p.Office = evil
	p.Current.Topic = evil
	p.Current.Name = evil
	p.Channels[0] = p.Current
	p.DMs[0].Label = evil
	p.DMs[0].LabelHandles = evil
	p.Members[1].DisplayName = evil
	p.Members[1].Title = evil
	p.Messages[0].AuthorName = evil
	p.Messages[0].AuthorHandle = evil
	p.ProviderNotice = evil
	doc, html := renderDoc(t, Dashboard(p))
	if strings.Contains(html, "<script>alert") || strings.Contains(html, "<img src=x") {
		t.Fatal("rendered HTML contains the unescaped payload")
	}
	if n := doc.Find("script:not([src])").Length(); n != 0 {
		t.Errorf("inline scripts = %d, want 0", n)
	}
	if n := doc.Find("img[onerror]").Length(); n != 0 {
		t.Errorf("img[onerror] = %d, want 0", n)
	}
	if got := doc.Find(byTestID("message-author")).First().Text(); got != evil {
		t.Errorf("author text = %q, want the literal payload", got)
	}
	if got := strings.TrimSpace(doc.Find(byTestID("channel-topic")).Text()); got != evil {
		t.Errorf("topic text = %q, want the literal payload", got)
	}
	if href, _ := doc.Find(byTestID("channel-link")).First().Attr("href"); strings.ContainsAny(href, `<>" `) {
		t.Errorf("channel href = %q, want it path-escaped", href)
	}

	login, html := renderDoc(t, Login(LoginPage{Error: evil, Next: `"><script>alert(1)</script>`}))
	if strings.Contains(html, "<script>alert") || login.Find("script:not([src])").Length() != 0 {
		t.Error("login page renders the payload unescaped")
	}
	_, html = renderDoc(t, Error(ErrorPage{Status: 400, Code: evil, Message: evil}))
	if strings.Contains(html, "<script>alert") {
		t.Error("error page renders the payload unescaped")
	}
}

func TestHelpers(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "two words", in: "Ada Lovelace", want: "AL"},
		{name: "one word", in: "lead", want: "L"},
		{name: "three words", in: "Grace Brewster Hopper", want: "GB"},
		{name: "empty", in: "  ", want: "?"},
		{name: "unicode", in: "élodie ünal", want: "ÉÜ"},
	}
	for _, tt := range tests {
		if got := initials(tt.in); got != tt.want {
			t.Errorf("%s: initials(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	// Values computed by the same hash in static/app.js (avatarClass).
	for handle, want := range map[string]string{"ada": "avatar avatar-c6", "lead": "avatar avatar-c4", "": "avatar avatar-c0"} {
		if got := avatarClass(handle); got != want {
			t.Errorf("avatarClass(%q) = %q, want %q", handle, got, want)
		}
	}
	if got := replyLabel(1); got != "1 reply" {
		t.Errorf("replyLabel(1) = %q", got)
	}
	if got := (ChannelItem{Name: "a b/c"}).Path(); got != "/c/a%20b%2Fc" {
		t.Errorf("Path() = %q, want /c/a%%20b%%2Fc", got)
	}
}
