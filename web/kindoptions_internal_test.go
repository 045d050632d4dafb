package web

import (
	"reflect"
	"testing"

	"github.com/bullpen-hq/bullpen/web/views"
)

// TestKindOptionsFromDeclarations: the timeline's kind filter, built from
// the event kinds' declared groups, offers the choices it offered when
// it was a hand-written list, value for value, and the tasks' and
// routines' kinds, each by its namespace.
func TestKindOptionsFromDeclarations(t *testing.T) {
	want := []views.KindOption{
		{Value: "message", Label: "Messages"},
		{Value: "agent.turn_started,agent.turn_finished,agent.turn_failed,agent.turn_abandoned", Label: "Turns"},
		{Value: "agent.tool_started,agent.tool_finished", Label: "Tool calls"},
		{Value: "agent.limit_reached", Label: "Budget stops"},
		{Value: "sandbox.exec_started,sandbox.exec_finished", Label: "Commands"},
		{Value: "wiki", Label: "Wiki edits"},
		{Value: "task", Label: "Tasks"},
		{Value: "routine", Label: "Routines"},
		{Value: "sandbox", Label: "Sandboxes"},
		{Value: "approval", Label: "Approvals"},
		{Value: "agent.hired,agent.updated,agent.fired,member,channel", Label: "People and channels"},
	}
	if got := kindOptions(); !reflect.DeepEqual(got, want) {
		t.Errorf("kindOptions() =\n%v\nwant\n%v", got, want)
	}
}
