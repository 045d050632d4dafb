package bullpen

import "fmt"

// The timeline lines of the task and routine kinds.

// taskVerbs say what each task kind did to its task.
var taskVerbs = map[string]string{
	EventTaskCreated: "created", EventTaskUpdated: "updated", EventTaskClaimed: "claimed",
	EventTaskReleased: "released", EventTaskHandedOff: "handed off", EventTaskSubmitted: "submitted for review",
	EventTaskReviewed: "reviewed", EventTaskTurn: "counted a turn on",
}

// taskLine: "@lead created task 3 “Form and error states”", with the
// state a change left it in and why; it links to the task's page.
func taskLine(ev Event, n EventNames) (EventLine, error) {
	te, err := TaskOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	t := te.Task
	text := fmt.Sprintf("%s %s task %d “%s”", byline(n, te.ByID), taskVerbs[ev.Type], t.ID, clipLine(t.Title, 80))
	switch {
	case ev.Type == EventTaskHandedOff && t.OwnerID != 0:
		text += " to " + actor(n, t.OwnerID)
	case te.From != "" && te.From != t.State:
		text += fmt.Sprintf(": %s → %s", te.From, t.State)
	}
	if why := te.Reason; why != "" {
		text += " (" + clipLine(why, 80) + ")"
	}
	return EventLine{Text: text, Link: fmt.Sprintf("/tasks/%d", t.ID)}, nil
}

// routineLine: "@admin created routine “Morning triage”", "routine
// “Morning triage” fired", "routine … skipped: no new messages"; it links
// to the routine's editor (a deleted one links nowhere).
func routineLine(ev Event, n EventNames) (EventLine, error) {
	re, err := RoutineOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	name := fmt.Sprintf("routine “%s”", clipLine(re.Routine.Name, 80))
	var text string
	switch ev.Type {
	case EventRoutineFired:
		text = name + " fired"
	case EventRoutineSkipped:
		text = name + " skipped"
		if re.Tick != nil && re.Tick.Reason != "" {
			text += ": " + clipLine(re.Tick.Reason, 120)
		}
	default:
		verb := map[string]string{EventRoutineCreated: "created", EventRoutineUpdated: "changed", EventRoutineDeleted: "deleted"}[ev.Type]
		text = fmt.Sprintf("%s %s %s", byline(n, re.ByID), verb, name)
	}
	line := EventLine{Text: text}
	if ev.Type != EventRoutineDeleted {
		line.Link = fmt.Sprintf("/routines/%d", re.Routine.ID)
	}
	return line, nil
}

// byline names who acted: a member, or the office itself (0: a lapsed
// lease, a routine's tick).
func byline(n EventNames, id int64) string {
	if id == 0 {
		return "the office"
	}
	return actor(n, id)
}
