package views

import "github.com/a-h/templ"

// panel is one tab of the dashboard's right-hand panel area.
type panel struct {
	ID    string // data-panel, panel-tab-ID and panel-ID test ids
	Label string
	Body  templ.Component
}

// dashboardPanels lists the tabs in order; the first is open at load.
// To add or fill a tab, change its entry here: app.js handles any tab that
// has data-panel-tab and a matching data-panel section.
func dashboardPanels(p DashboardPage) []panel {
	return []panel{
		{ID: "activity", Label: "Activity", Body: timelinePanel(p.Timeline)},
		{ID: "wiki", Label: "Wiki", Body: wikiPanel()},
		{ID: "sandboxes", Label: "Sandboxes", Body: sandboxPanel(p.SandboxDefaults)},
		{ID: "agents", Label: "Agents", Body: agentsPanel()},
	}
}

func boolAttr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
