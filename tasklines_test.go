package bullpen

import (
	"encoding/json"
	"testing"
)

type lineNames map[int64]string

func (n lineNames) MemberHandle(id int64) string             { return n[id] }
func (n lineNames) ChannelName(int64) (name string, dm bool) { return "general", false }

// TestTaskAndRoutineLines: each task and routine kind reads as what
// happened, who did it (the office when nobody did), and links to the
// task or routine.
func TestTaskAndRoutineLines(t *testing.T) {
	n := lineNames{1: "admin", 2: "engineer"}
	task := Task{ID: 7, Title: "Form and error states", State: TaskInProgress, OwnerID: 2}
	routine := Routine{ID: 3, Name: "Morning triage"}
	cases := []struct {
		kind    string
		payload any
		text    string
		link    string
	}{
		{EventTaskCreated, TaskEvent{Task: task, ByID: 1}, "@admin created task 7 “Form and error states”", "/tasks/7"},
		{EventTaskClaimed, TaskEvent{Task: task, ByID: 2, From: TaskOpen}, "@engineer claimed task 7 “Form and error states”: open → in_progress", "/tasks/7"},
		{EventTaskHandedOff, TaskEvent{Task: task, ByID: 1}, "@admin handed off task 7 “Form and error states” to @engineer", "/tasks/7"},
		{EventTaskReleased, TaskEvent{Task: Task{ID: 7, Title: "Form and error states", State: TaskOpen}, From: TaskInProgress, Reason: "its claim lapsed"},
			"the office released task 7 “Form and error states”: in_progress → open (its claim lapsed)", "/tasks/7"},
		{EventTaskTurn, TaskEvent{Task: task, From: TaskInProgress}, "the office counted a turn on task 7 “Form and error states”", "/tasks/7"},
		{EventRoutineCreated, RoutineEvent{Routine: routine, ByID: 1}, "@admin created routine “Morning triage”", "/routines/3"},
		{EventRoutineSkipped, RoutineEvent{Routine: routine, Tick: &RoutineTick{Reason: "no new messages"}}, "routine “Morning triage” skipped: no new messages", "/routines/3"},
		{EventRoutineFired, RoutineEvent{Routine: routine}, "routine “Morning triage” fired", "/routines/3"},
		{EventRoutineDeleted, RoutineEvent{Routine: routine, ByID: 1}, "@admin deleted routine “Morning triage”", ""},
	}
	for _, c := range cases {
		body, _ := json.Marshal(c.payload)
		got, err := LineOf(Event{Type: c.kind, Payload: body}, n)
		if err != nil || got.Text != c.text || got.Link != c.link {
			t.Errorf("%s: %q → %q (%v); want %q → %q", c.kind, got.Text, got.Link, err, c.text, c.link)
		}
	}
}
