package views

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestDashboardCarriesEventKinds: the dashboard's head holds the event
// kind catalogue as JSON in a meta tag (no inline script), whatever the
// labels hold, for BP.eventKind to read.
func TestDashboardCarriesEventKinds(t *testing.T) {
	p := sampleDashboard()
	p.EventKinds = []EventKindItem{
		{Name: "agent.turn_started", Label: "Turn started", Group: "Turns"},
		{Name: "agent.delta", Label: `Model "text" <b>`, Ephemeral: true},
	}
	doc, _ := renderDoc(t, Dashboard(p))
	content, ok := doc.Find(`head meta[name="bp-event-kinds"]`).Attr("content")
	if !ok {
		t.Fatal("no meta bp-event-kinds in the head")
	}
	var got []EventKindItem
	if err := json.Unmarshal([]byte(content), &got); err != nil || !reflect.DeepEqual(got, p.EventKinds) {
		t.Errorf("bp-event-kinds = %s (%v), want %+v", content, err, p.EventKinds)
	}
}
