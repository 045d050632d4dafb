package bullpen

import (
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Task states. done and cancelled are closed; a closed task can be
// reopened (to open) by a person.
const (
	TaskOpen       = "open"
	TaskInProgress = "in_progress"
	TaskInReview   = "in_review"
	TaskDone       = "done"
	TaskBlocked    = "blocked"
	TaskCancelled  = "cancelled"
)

// TaskStates lists every state, in board order.
var TaskStates = []string{TaskOpen, TaskInProgress, TaskBlocked, TaskInReview, TaskDone, TaskCancelled}

// What a parent does once every sub-task is done (Task.WhenSubtasksDone).
const (
	SubtasksDoneNothing = ""       // nothing: its owner closes it
	SubtasksDoneClose   = "close"  // the parent becomes done
	SubtasksDoneReview  = "review" // the parent is submitted for review
)

// Limits on task fields.
const (
	MaxTaskTitle  = 200
	MaxTaskBody   = 20000
	MaxTaskLabels = 20
	MaxTaskLabel  = 40
	MaxTaskDeps   = 50
	MaxTaskLinks  = 50
	MaxTaskNote   = 4000
	MaxSubtasks   = 20
)

// ApprovalTaskReview is the Tool of an approval that asks a person to
// review a submitted task; answering it reviews the task.
const ApprovalTaskReview = "task_review"

// Link kinds of a task.
const (
	TaskLinkWiki = "wiki" // a wiki page's slug
	TaskLinkFile = "file" // a path in an agent's workspace
)

// TaskLink points from a task to a wiki page or to a file in an agent's
// workspace.
type TaskLink struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	// AgentID is the workspace's agent, for a file link.
	AgentID int64 `json:"agent_id,omitempty"`
}

// TaskTokens are the model usage summed over the turns that worked on a
// task.
type TaskTokens struct {
	Turns      int64 `json:"turns"`
	ModelCalls int64 `json:"model_calls"`
	Input      int64 `json:"input_tokens"`
	Output     int64 `json:"output_tokens"`
}

// Task is a piece of work with at most one owner. Its discussion lives in
// a thread of its own (ThreadID, a root message in ChannelID).
type Task struct {
	ID        int64  `json:"id"`
	Title     string `json:"title"`
	Body      string `json:"body"`
	State     string `json:"state"`
	OwnerID   int64  `json:"owner_id,omitempty"`
	CreatorID int64  `json:"creator_id"`
	ParentID  int64  `json:"parent_id,omitempty"`
	ChannelID int64  `json:"channel_id"`
	ThreadID  int64  `json:"thread_id"`
	// DependsOn are the tasks that block this one until they are done.
	DependsOn []int64    `json:"depends_on"`
	Labels    []string   `json:"labels"`
	Links     []TaskLink `json:"links"`
	Due       *time.Time `json:"due,omitempty"`
	// ReviewerID, when set, is the member who must approve a submission;
	// ReviewHuman asks any person instead. With neither, a submission is
	// done at once.
	ReviewerID       int64  `json:"reviewer_id,omitempty"`
	ReviewHuman      bool   `json:"review_human,omitempty"`
	WhenSubtasksDone string `json:"when_subtasks_done,omitempty"`
	// LeaseUntil is when an agent's claim lapses unless its work renews
	// it; nil for a person's claim and for a task without owner.
	LeaseUntil *time.Time `json:"lease_until,omitempty"`
	// Failures counts the owner's failed turns on the task in a row.
	Failures int `json:"failures,omitempty"`
	// ApprovalID is the pending review's approval while in_review.
	ApprovalID int64      `json:"approval_id,omitempty"`
	Tokens     TaskTokens `json:"tokens"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	ClosedAt   *time.Time `json:"closed_at,omitempty"`
}

// Closed reports whether the task is done or cancelled.
func (t *Task) Closed() bool { return t.State == TaskDone || t.State == TaskCancelled }

// NeedsReview reports whether a submission waits for an approval.
func (t *Task) NeedsReview() bool { return t.ReviewerID != 0 || t.ReviewHuman }

// TaskInput is a new task. ChannelID is where its thread lives.
type TaskInput struct {
	Title            string     `json:"title"`
	Body             string     `json:"body"`
	ChannelID        int64      `json:"channel_id"`
	ParentID         int64      `json:"parent_id"`
	OwnerID          int64      `json:"owner_id"`
	DependsOn        []int64    `json:"depends_on,omitempty"`
	Labels           []string   `json:"labels,omitempty"`
	Links            []TaskLink `json:"links,omitempty"`
	Due              *time.Time `json:"due,omitempty"`
	ReviewerID       int64      `json:"reviewer_id"`
	ReviewHuman      bool       `json:"review_human"`
	WhenSubtasksDone string     `json:"when_subtasks_done"`
	// Subtasks are created with the task, in the same transaction, as
	// its children (their own Subtasks and ChannelID are ignored).
	Subtasks []TaskInput `json:"subtasks,omitempty"`
}

// TaskPatch changes a task; nil fields stay as they are. Note is said in
// the task's thread and the event.
type TaskPatch struct {
	Title            *string     `json:"title,omitempty"`
	Body             *string     `json:"body,omitempty"`
	State            *string     `json:"state,omitempty"`
	DependsOn        *[]int64    `json:"depends_on,omitempty"`
	Labels           *[]string   `json:"labels,omitempty"`
	Links            *[]TaskLink `json:"links,omitempty"`
	Due              *time.Time  `json:"due,omitempty"`
	ClearDue         bool        `json:"clear_due"`
	ReviewerID       *int64      `json:"reviewer_id,omitempty"`
	ReviewHuman      *bool       `json:"review_human,omitempty"`
	WhenSubtasksDone *string     `json:"when_subtasks_done,omitempty"`
	Note             string      `json:"note"`
}

// TaskFilter selects tasks; zero fields match all. Open matches every
// state but done and cancelled.
type TaskFilter struct {
	States    []string `json:"states"`
	OwnerID   int64    `json:"owner_id"`
	Unowned   bool     `json:"unowned"`
	Label     string   `json:"label"`
	ChannelID int64    `json:"channel_id"`
	ParentID  int64    `json:"parent_id"`
	Open      bool     `json:"open"`
	// Before pages: only tasks with a lower ID.
	Before int64 `json:"before"`
	Limit  int   `json:"limit"`
}

// ValidTaskState reports whether s is a task state.
func ValidTaskState(s string) bool { return slices.Contains(TaskStates, s) }

var labelRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.:/-]*$`)

// Validate checks a new task's own fields (not the references, which
// need the store).
func (in *TaskInput) Validate() error {
	if err := validateText("title", in.Title, 1, MaxTaskTitle); err != nil {
		return err
	}
	if err := ValidateTaskBody(in.Body); err != nil {
		return err
	}
	if in.ChannelID <= 0 {
		return Errorf(EINVALID, "channel_id is required: the task's thread lives in a channel")
	}
	if err := ValidateTaskLabels(in.Labels); err != nil {
		return err
	}
	if err := ValidateTaskLinks(in.Links); err != nil {
		return err
	}
	if err := validateDeps(in.DependsOn); err != nil {
		return err
	}
	if len(in.Subtasks) > MaxSubtasks {
		return Errorf(EINVALID, "a task is created with at most %d sub-tasks", MaxSubtasks)
	}
	for i := range in.Subtasks {
		sub := in.Subtasks[i]
		sub.ChannelID, sub.Subtasks = in.ChannelID, nil
		if err := sub.Validate(); err != nil {
			return Errorf(ErrorCode(err), "sub-task %d: %s", i+1, ErrorMessage(err))
		}
	}
	return validateWhenSubs(in.WhenSubtasksDone)
}

// Validate checks a patch's own fields.
func (p *TaskPatch) Validate() error {
	if p.Title != nil {
		if err := validateText("title", *p.Title, 1, MaxTaskTitle); err != nil {
			return err
		}
	}
	if p.Body != nil {
		if err := ValidateTaskBody(*p.Body); err != nil {
			return err
		}
	}
	if p.State != nil && !ValidTaskState(*p.State) {
		return Errorf(EINVALID, "state %q is not one of %s", clip(*p.State, 40), strings.Join(TaskStates, ", "))
	}
	if p.Labels != nil {
		if err := ValidateTaskLabels(*p.Labels); err != nil {
			return err
		}
	}
	if p.Links != nil {
		if err := ValidateTaskLinks(*p.Links); err != nil {
			return err
		}
	}
	if p.DependsOn != nil {
		if err := validateDeps(*p.DependsOn); err != nil {
			return err
		}
	}
	if p.WhenSubtasksDone != nil {
		if err := validateWhenSubs(*p.WhenSubtasksDone); err != nil {
			return err
		}
	}
	return ValidateTaskNote(p.Note)
}

// ValidateTaskBody checks a task's Markdown body (it may be empty).
func ValidateTaskBody(body string) error {
	if !utf8.ValidString(body) || strings.ContainsRune(body, 0) {
		return Errorf(EINVALID, "body is not valid UTF-8 text")
	}
	if n := utf8.RuneCountInString(body); n > MaxTaskBody {
		return Errorf(ETOOLARGE, "body has %d characters; the limit is %d", n, MaxTaskBody)
	}
	return nil
}

// ValidateTaskNote checks a note given with a change (it may be empty).
func ValidateTaskNote(note string) error {
	if !utf8.ValidString(note) || strings.ContainsRune(note, 0) {
		return Errorf(EINVALID, "note is not valid UTF-8 text")
	}
	if n := utf8.RuneCountInString(note); n > MaxTaskNote {
		return Errorf(ETOOLARGE, "note has %d characters; the limit is %d", n, MaxTaskNote)
	}
	return nil
}

// ValidateTaskLabels checks labels: lower-case words, at most
// MaxTaskLabels, no repeats.
func ValidateTaskLabels(labels []string) error {
	if len(labels) > MaxTaskLabels {
		return Errorf(EINVALID, "a task has at most %d labels", MaxTaskLabels)
	}
	seen := map[string]bool{}
	for _, l := range labels {
		if len(l) > MaxTaskLabel || !labelRE.MatchString(l) {
			return Errorf(EINVALID, "label %q must be 1-%d characters of a-z, 0-9, '_', '.', ':', '/' or '-'", clip(l, 50), MaxTaskLabel)
		}
		if seen[l] {
			return Errorf(EINVALID, "label %q is given twice", l)
		}
		seen[l] = true
	}
	return nil
}

// ValidateTaskLinks checks links: a wiki slug or a workspace path.
func ValidateTaskLinks(links []TaskLink) error {
	if len(links) > MaxTaskLinks {
		return Errorf(EINVALID, "a task has at most %d links", MaxTaskLinks)
	}
	for _, l := range links {
		if l.Kind != TaskLinkWiki && l.Kind != TaskLinkFile {
			return Errorf(EINVALID, "link kind %q must be %q or %q", clip(l.Kind, 20), TaskLinkWiki, TaskLinkFile)
		}
		if err := validateText("link target", l.Target, 1, 500); err != nil {
			return err
		}
		if l.Kind == TaskLinkFile && l.AgentID <= 0 {
			return Errorf(EINVALID, "a file link names the agent whose workspace holds it (agent_id)")
		}
	}
	return nil
}

func validateDeps(ids []int64) error {
	if len(ids) > MaxTaskDeps {
		return Errorf(EINVALID, "a task depends on at most %d tasks", MaxTaskDeps)
	}
	seen := map[int64]bool{}
	for _, id := range ids {
		if id <= 0 || seen[id] {
			return Errorf(EINVALID, "depends_on holds %d, which is not a task ID or is repeated", id)
		}
		seen[id] = true
	}
	return nil
}

func validateWhenSubs(s string) error {
	switch s {
	case SubtasksDoneNothing, SubtasksDoneClose, SubtasksDoneReview:
		return nil
	}
	return Errorf(EINVALID, "when_subtasks_done %q must be empty, %q or %q", clip(s, 20), SubtasksDoneClose, SubtasksDoneReview)
}

// Validate checks a filter.
func (f *TaskFilter) Validate() error {
	for _, s := range f.States {
		if !ValidTaskState(s) {
			return Errorf(EINVALID, "state %q is not one of %s", clip(s, 40), strings.Join(TaskStates, ", "))
		}
	}
	if f.Label != "" {
		if err := ValidateTaskLabels([]string{f.Label}); err != nil {
			return err
		}
	}
	if f.Limit < 0 || f.Limit > 500 || f.Before < 0 || f.OwnerID < 0 || f.ChannelID < 0 || f.ParentID < 0 {
		return Errorf(EINVALID, "limit must be between 1 and 500, and IDs positive")
	}
	return nil
}

// taskMoves are the state changes a task may make by update; claim,
// submit and review make theirs through their own calls.
var taskMoves = map[string][]string{
	TaskOpen:       {TaskInProgress, TaskBlocked, TaskCancelled},
	TaskInProgress: {TaskOpen, TaskBlocked, TaskCancelled, TaskDone},
	TaskBlocked:    {TaskOpen, TaskInProgress, TaskCancelled},
	TaskInReview:   {TaskInProgress, TaskCancelled},
	TaskDone:       {TaskOpen},
	TaskCancelled:  {TaskOpen},
}

// CanMove reports whether a task may go from one state to another by an
// update.
func CanMove(from, to string) bool { return from == to || slices.Contains(taskMoves[from], to) }

// TaskClaimedError is a claim that lost: someone else owns the task. It
// carries the task as it is, so a caller can name the current owner; its
// code is ECONFLICT (409).
type TaskClaimedError struct {
	Task   Task
	Reason string
}

// Error implements error.
func (e *TaskClaimedError) Error() string { return "tasks: " + e.Reason }

// Unwrap returns the coded error, so ErrorCode reports ECONFLICT.
func (e *TaskClaimedError) Unwrap() error { return &Error{Code: ECONFLICT, Message: e.Reason} }
