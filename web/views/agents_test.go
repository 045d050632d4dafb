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
