package views

import (
	"strings"
	"testing"
)

// The dashboard mounts the wiki panel in its Wiki tab and loads its script
// and stylesheet.
func TestDashboardWikiPanel(t *testing.T) {
	doc, html := renderDoc(t, Dashboard(sampleDashboard()))
	panel := doc.Find(`[data-panel="wiki"] ` + byTestID("wiki-panel"))
	if panel.Length() != 1 {
		t.Fatalf("wiki panel mounted %d times in the Wiki tab, want 1", panel.Length())
	}
	for _, id := range []string{"wiki-search", "wiki-tag", "wiki-new", "wiki-list", "wiki-wanted", "wiki-body",
		"wiki-backlinks", "wiki-editor", "wiki-edit-body", "wiki-preview", "wiki-conflict", "wiki-revisions", "wiki-diff"} {
		if panel.Find(byTestID(id)).Length() != 1 {
			t.Errorf("wiki panel lacks %s", id)
		}
	}
	for _, view := range []string{"page", "edit", "history"} {
		if _, hidden := panel.Find(`[data-wiki-view="` + view + `"]`).Attr("hidden"); !hidden {
			t.Errorf("view %s is shown at load, want only the list", view)
		}
	}
	for _, asset := range []string{`src="/static/wiki.js?v=`, `href="/static/wiki.css?v=`} {
		if !strings.Contains(html, asset) {
			t.Errorf("dashboard does not load %s", asset)
		}
	}
}
