package bullpen

import (
	"time"
)

// Routine actions.
const (
	RoutineWake = "wake" // post the prompt to the agent in the channel: it wakes
	RoutineTask = "task" // create a task from the template
)

// Routine skip conditions: a tick whose condition holds is recorded as
// skipped, with its reason, and costs no model call.
const (
	SkipNever         = ""
	SkipNoNewMessages = "no_new_messages" // skip unless the channel has messages since the last run
	SkipNoOpenLabel   = "no_open_label"   // skip unless open tasks carry SkipLabel
)

// Routine tick states.
const (
	TickFired   = "fired"
	TickSkipped = "skipped"
)

// Routine event types; their payload is a RoutineEvent.
const (
	EventRoutineCreated = "routine.created"
	EventRoutineUpdated = "routine.updated"
	EventRoutineDeleted = "routine.deleted"
	EventRoutineFired   = "routine.fired"
	EventRoutineSkipped = "routine.skipped"
)

// Limits on routines.
const (
	MinRoutineInterval = time.Second
	MaxRoutinePrompt   = 4000
)

// Routine wakes an agent or creates a task on a schedule: a cron
// expression in a time zone, or an interval. Each tick is a stored row,
// so it fires once across replicas and restarts; after downtime the
// missed ticks make at most one run.
type Routine struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// Cron is a five-field expression read in TZ (an IANA name; UTC when
	// empty); IntervalSec is the other kind of schedule. Exactly one is set.
	Cron        string `json:"cron,omitempty"`
	TZ          string `json:"tz,omitempty"`
	IntervalSec int64  `json:"interval_sec,omitempty"`
	Action      string `json:"action"`
	ChannelID   int64  `json:"channel_id"`
	// AgentID and Prompt: the wake action's agent and what it is told.
	AgentID int64  `json:"agent_id,omitempty"`
	Prompt  string `json:"prompt,omitempty"`
	// Task is the task action's template (its ChannelID is the routine's).
	Task      *TaskInput `json:"task,omitempty"`
	Skip      string     `json:"skip,omitempty"`
	SkipLabel string     `json:"skip_label,omitempty"`
	Enabled   bool       `json:"enabled"`
	CreatorID int64      `json:"creator_id"`
	// NextRunAt is the next tick; LastRunAt the last tick, fired or
	// skipped, LastState its state and LastReason why it was skipped.
	NextRunAt  *time.Time `json:"next_run_at,omitempty"`
	LastRunAt  *time.Time `json:"last_run_at,omitempty"`
	LastState  string     `json:"last_state,omitempty"`
	LastReason string     `json:"last_reason,omitempty"`
	// LastMessageID is the channel's newest message at the last run, for
	// the no_new_messages condition.
	LastMessageID int64     `json:"-"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// RoutineInput creates or (with nil fields kept) changes a routine.
type RoutineInput struct {
	Name        *string    `json:"name,omitempty"`
	Cron        *string    `json:"cron,omitempty"`
	TZ          *string    `json:"tz,omitempty"`
	IntervalSec *int64     `json:"interval_sec,omitempty"`
	Action      *string    `json:"action,omitempty"`
	ChannelID   *int64     `json:"channel_id,omitempty"`
	AgentID     *int64     `json:"agent_id,omitempty"`
	Prompt      *string    `json:"prompt,omitempty"`
	Task        *TaskInput `json:"task,omitempty"`
	Skip        *string    `json:"skip,omitempty"`
	SkipLabel   *string    `json:"skip_label,omitempty"`
	Enabled     *bool      `json:"enabled,omitempty"`
}

// RoutineTick is one tick of a routine: fired or skipped, with why.
type RoutineTick struct {
	ID        int64     `json:"id"`
	RoutineID int64     `json:"routine_id"`
	DueAt     time.Time `json:"due_at"`
	State     string    `json:"state"`
	Reason    string    `json:"reason,omitempty"`
	// Missed counts the ticks that downtime folded into this one.
	Missed    int64     `json:"missed,omitempty"`
	MessageID int64     `json:"message_id,omitempty"`
	TaskID    int64     `json:"task_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// RoutineEvent is the payload of the routine events.
type RoutineEvent struct {
	Routine Routine      `json:"routine"`
	Tick    *RoutineTick `json:"tick,omitempty"`
	ByID    int64        `json:"by_id,omitempty"`
}

// RoutineOf decodes the payload of a routine.* event.
func RoutineOf(ev Event) (RoutineEvent, error) {
	return DecodePayload[RoutineEvent](ev, EventRoutineCreated, EventRoutineUpdated, EventRoutineDeleted,
		EventRoutineFired, EventRoutineSkipped)
}

// Validate checks a routine's own fields; the schedule's expression and
// time zone, and the references, are checked by the service.
func (r *Routine) Validate() error {
	if err := validateText("name", r.Name, 1, 80); err != nil {
		return err
	}
	switch {
	case (r.Cron == "") == (r.IntervalSec == 0):
		return Errorf(EINVALID, "a routine has a schedule: give exactly one of cron and interval_sec")
	case r.IntervalSec != 0 && r.IntervalSec < int64(MinRoutineInterval/time.Second):
		return Errorf(EINVALID, "interval_sec must be at least 1")
	case r.IntervalSec != 0 && r.TZ != "":
		return Errorf(EINVALID, "tz applies to a cron schedule only")
	case r.ChannelID <= 0:
		return Errorf(EINVALID, "channel_id is required")
	}
	switch r.Action {
	case RoutineWake:
		if r.AgentID <= 0 {
			return Errorf(EINVALID, "the wake action names the agent (agent_id)")
		}
		if err := ValidateTaskNote(r.Prompt); err != nil || r.Prompt == "" {
			return Errorf(EINVALID, "the wake action needs a prompt of at most %d characters", MaxRoutinePrompt)
		}
	case RoutineTask:
		if r.Task == nil {
			return Errorf(EINVALID, "the task action needs a task template (task)")
		}
		in := *r.Task
		in.ChannelID, in.Subtasks = r.ChannelID, nil
		if err := in.Validate(); err != nil {
			return Errorf(ErrorCode(err), "task template: %s", ErrorMessage(err))
		}
	default:
		return Errorf(EINVALID, "action %q must be %q or %q", clip(r.Action, 20), RoutineWake, RoutineTask)
	}
	switch r.Skip {
	case SkipNever, SkipNoNewMessages:
	case SkipNoOpenLabel:
		if err := ValidateTaskLabels([]string{r.SkipLabel}); err != nil || r.SkipLabel == "" {
			return Errorf(EINVALID, "skip %q needs a valid skip_label", SkipNoOpenLabel)
		}
	default:
		return Errorf(EINVALID, "skip %q must be empty, %q or %q", clip(r.Skip, 30), SkipNoNewMessages, SkipNoOpenLabel)
	}
	return nil
}

// Apply sets in's given fields on r.
func (in *RoutineInput) Apply(r *Routine) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&r.Name, in.Name)
	set(&r.Cron, in.Cron)
	set(&r.TZ, in.TZ)
	set(&r.Action, in.Action)
	set(&r.Prompt, in.Prompt)
	set(&r.Skip, in.Skip)
	set(&r.SkipLabel, in.SkipLabel)
	if in.IntervalSec != nil {
		r.IntervalSec = *in.IntervalSec
	}
	if in.ChannelID != nil {
		r.ChannelID = *in.ChannelID
	}
	if in.AgentID != nil {
		r.AgentID = *in.AgentID
	}
	if in.Task != nil {
		r.Task = in.Task
	}
	if in.Enabled != nil {
		r.Enabled = *in.Enabled
	}
}

// detail marks a kind as a step the highlights leave out.
func detail(k EventKind) EventKind {
	k.Detail = true
	return k
}

func routineKinds() []EventKind {
	routine := func(name, label string) EventKind {
		return EventKind{Name: name, Label: label, Group: GroupRoutines, Visibility: VisibleChannel, Actor: "by_id", Decode: decoder(RoutineOf), Line: routineLine}
	}
	return []EventKind{
		routine(EventRoutineCreated, "Routine created"),
		routine(EventRoutineUpdated, "Routine updated"),
		routine(EventRoutineDeleted, "Routine deleted"),
		routine(EventRoutineFired, "Routine fired"),
		detail(routine(EventRoutineSkipped, "Routine skipped")),
	}
}
