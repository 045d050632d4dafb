package views

import (
	"strings"
	"testing"
)

// TestTimelinePanel: the Activity tab shows the entries newest first with
// their links, commands as code, the filters with the URL's choices
// selected, and the Older button only when there is an older page.
func TestTimelinePanel(t *testing.T) {
	p := sampleDashboard()
	p.Timeline.Agent, p.Timeline.Kind = "eng", "wiki"
	doc, _ := renderDoc(t, Dashboard(p))
	tl := doc.Find(`[data-panel="activity"] ` + byTestID("timeline"))
	if got, _ := tl.Attr("data-after"); got != "42" {
		t.Errorf("data-after = %q, want 42", got)
	}
	entries := tl.Find(byTestID("timeline-entry"))
	if entries.Length() != 5 {
		t.Fatalf("%d entries, want 5", entries.Length())
	}
	first := entries.First()
	if got := strings.Join(strings.Fields(first.Find(".tl-line").Text()), " "); got != "@eng ran df -h → exit 0 in 12 ms" {
		t.Errorf("first line = %q", got)
	}
	if got := first.Find("code").Text(); got != "df -h" {
		t.Errorf("command shown as %q, want df -h in <code>", got)
	}
	if got, _ := first.Find(byTestID("timeline-link")).Attr("href"); got != "#sandbox/sb_1/exec/x_1" {
		t.Errorf("first link = %q", got)
	}
	if got := entries.Last().Find(byTestID("timeline-link")).Length(); got != 0 {
		t.Errorf("an entry without a link has %d links", got)
	}
	if got, _ := tl.Find(`#tl-agent option[selected]`).Attr("value"); got != "eng" {
		t.Errorf("agent filter selected %q, want eng", got)
	}
	if got, _ := tl.Find(`#tl-kind option[selected]`).Attr("value"); got != "wiki" {
		t.Errorf("kind filter selected %q, want wiki", got)
	}
	if _, hidden := tl.Find(byTestID("timeline-older")).Attr("hidden"); hidden {
		t.Error("Older is hidden although next_before is set")
	}
	p.Timeline.NextBefore, p.Timeline.Entries = 0, nil
	doc, _ = renderDoc(t, Dashboard(p))
	if _, hidden := doc.Find(byTestID("timeline-older")).Attr("hidden"); !hidden {
		t.Error("Older shows with no older page")
	}
	if _, hidden := doc.Find(byTestID("timeline-empty")).Attr("hidden"); hidden {
		t.Error("the empty note is hidden with no entries")
	}
}

// TestReplyPreviews: the latest replies show under their root, with the
// author's handle; names are text and only the server's HTML is markup.
func TestReplyPreviews(t *testing.T) {
	p := sampleDashboard()
	p.Messages[0].Replies[0].AuthorHandle = `<img src=x onerror=alert(1)>`
	doc, _ := renderDoc(t, Dashboard(p))
	root := doc.Find(byTestID("message") + `[data-id="10"]`)
	previews := root.Find(byTestID("reply-preview"))
	if previews.Length() != 2 {
		t.Fatalf("%d previews under message 10, want 2", previews.Length())
	}
	if got := previews.Eq(1).Find(byTestID("reply-preview-body") + " code").Text(); got != "make test" {
		t.Errorf("preview HTML not inserted: code = %q", got)
	}
	if got := previews.Eq(0).Find(byTestID("reply-preview-handle")).Text(); got != "@<img src=x onerror=alert(1)>" {
		t.Errorf("handle = %q, want the literal text", got)
	}
	if root.Find("img").Length() != 0 {
		t.Error("a handle became markup")
	}
	if got, _ := previews.Eq(1).Find(byTestID("reply-preview-handle")).Attr("data-thread-open"); got != "10" {
		t.Errorf("preview opens thread %q, want 10", got)
	}
	if _, hidden := doc.Find(byTestID("message") + `[data-id="13"] ` + byTestID("reply-previews")).Attr("hidden"); !hidden {
		t.Error("message 13 has no replies loaded but shows a preview list")
	}
	if _, hidden := root.Find(byTestID("live-line")).Attr("hidden"); !hidden {
		t.Error("the live line shows with no turn running")
	}
}
