package bullpen

// Task event types. Their payload is a TaskEvent.
const (
	EventTaskCreated   = "task.created"
	EventTaskUpdated   = "task.updated"
	EventTaskClaimed   = "task.claimed"
	EventTaskReleased  = "task.released"
	EventTaskHandedOff = "task.handed_off"
	EventTaskSubmitted = "task.submitted"
	EventTaskReviewed  = "task.reviewed"
	// EventTaskTurn: a turn in the task's thread ended; its tokens were
	// added to the task's and its owner's lease renewed (or a failure
	// counted). A detail the timeline's highlights leave out: the turn's
	// own line tells it.
	EventTaskTurn = "task.turn_recorded"
)

// TaskEvent is the payload of the task events: the task as it is after
// the change, who made it, and why.
type TaskEvent struct {
	Task Task `json:"task"`
	// ByID is the member who acted; 0 for the office itself (a lapsed
	// lease, a routine).
	ByID int64 `json:"by_id,omitempty"`
	// From is the state before the change.
	From   string `json:"from,omitempty"`
	Note   string `json:"note,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// TaskOf decodes the payload of a task.* event.
func TaskOf(ev Event) (TaskEvent, error) {
	return DecodePayload[TaskEvent](ev, EventTaskCreated, EventTaskUpdated, EventTaskClaimed, EventTaskReleased,
		EventTaskHandedOff, EventTaskSubmitted, EventTaskReviewed, EventTaskTurn)
}

func taskKinds() []EventKind {
	task := func(name, label string) EventKind {
		return EventKind{Name: name, Label: label, Group: GroupTasks, Visibility: VisibleChannel, Actor: "by_id", Decode: decoder(TaskOf), Line: taskLine}
	}
	return []EventKind{
		task(EventTaskCreated, "Task created"),
		task(EventTaskUpdated, "Task updated"),
		task(EventTaskClaimed, "Task claimed"),
		task(EventTaskReleased, "Task released"),
		task(EventTaskHandedOff, "Task handed off"),
		task(EventTaskSubmitted, "Task submitted"),
		task(EventTaskReviewed, "Task reviewed"),
		detail(task(EventTaskTurn, "Task turn recorded")),
	}
}
