package views

import "testing"

// The Sandboxes tab holds the panel that sandboxes.js drives, and the
// dashboard loads the script and its stylesheet.
func TestSandboxPanel(t *testing.T) {
	doc, _ := renderDoc(t, Dashboard(sampleDashboard()))
	sec := doc.Find(`section[data-panel="sandboxes"]`)
	if sec.Find(`[data-sandboxes]`).Length() != 1 {
		t.Fatal("the Sandboxes tab has no [data-sandboxes] panel")
	}
	for _, id := range []string{"sandbox-list", "sandbox-new", "sandbox-create-form", "sandbox-name", "sandbox-memory",
		"sandbox-create-submit", "sandbox-detail", "sandbox-log", "sandbox-command-form", "sandbox-command-input",
		"sandbox-command-run", "sandbox-file-list", "sandbox-upload-input", "sandbox-file-text"} {
		if n := sec.Find(byTestID(id)).Length(); n != 1 {
			t.Errorf("%s: %d elements, want 1", id, n)
		}
	}
	if _, hidden := sec.Find(byTestID("sandbox-detail")).Attr("hidden"); !hidden {
		t.Error("the detail view shows before a sandbox is open")
	}
	if _, hidden := sec.Find(byTestID("sandbox-create-form")).Attr("hidden"); !hidden {
		t.Error("the create form shows before it is asked for")
	}
	if doc.Find(`script[src^="/static/sandboxes.js?v="]`).Length() != 1 || doc.Find(`link[href^="/static/sandboxes.css?v="]`).Length() != 1 {
		t.Error("the dashboard does not load sandboxes.js and sandboxes.css")
	}
	if sec.Find("script").Length() != 0 {
		t.Error("inline script in the panel")
	}
}
