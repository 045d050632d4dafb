package views

import "testing"

// The Agents tab has its list, approvals and activity feed, and the page
// loads agents.js, which fills them.
func TestAgentsPanel(t *testing.T) {
	doc, _ := renderDoc(t, Dashboard(DashboardPage{Office: "Bullpen", CSRF: "tok", Current: ChannelItem{ID: 1, Name: "general"}}))
	panel := doc.Find(byTestID("panel-agents"))
	for _, id := range []string{"agents-panel", "agents-list", "agents-empty", "approvals-list", "approvals-empty", "agents-activity"} {
		if panel.Find(byTestID(id)).Length() != 1 {
			t.Errorf("agents panel has no %s", id)
		}
	}
	if doc.Find(`script[src*="agents.js"]`).Length() != 1 {
		t.Errorf("dashboard does not load agents.js")
	}
}

// The hire form is there, hidden until asked for, with a role select that
// agents.js fills from /api/v1/roles, optional handle, name and title, and
// a place for the server's error; no inline script.
func TestAgentsHireForm(t *testing.T) {
	doc, _ := renderDoc(t, Dashboard(DashboardPage{Office: "Bullpen", CSRF: "tok", Current: ChannelItem{ID: 1, Name: "general"}}))
	panel := doc.Find(byTestID("panel-agents"))
	for _, id := range []string{"agent-hire-open", "agent-hire-form", "agent-hire-role", "agent-hire-handle", "agent-hire-name",
		"agent-hire-title", "agent-hire-submit", "agent-hire-cancel", "agent-hire-error", "agent-hire-result"} {
		if n := panel.Find(byTestID(id)).Length(); n != 1 {
			t.Errorf("%s: %d elements, want 1", id, n)
		}
	}
	form := panel.Find(byTestID("agent-hire-form"))
	if _, hidden := form.Attr("hidden"); !hidden {
		t.Error("the hire form shows before it is asked for")
	}
	if name, _ := panel.Find(byTestID("agent-hire-role")).Attr("name"); name != "role" || !panel.Find(byTestID("agent-hire-role")).Is("select") {
		t.Errorf("role field is not a select named role (name %q)", name)
	}
	for _, f := range []string{"handle", "name", "title"} {
		in := form.Find(`input[name="` + f + `"]`)
		if _, req := in.Attr("required"); in.Length() != 1 || req {
			t.Errorf("%s: want one optional input", f)
		}
	}
	if _, hidden := panel.Find(byTestID("agent-hire-error")).Attr("hidden"); !hidden {
		t.Error("the hire error shows before a hire failed")
	}
	if panel.Find("script").Length() != 0 {
		t.Error("inline script in the agents panel")
	}
}
