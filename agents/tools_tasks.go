package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/tasks"
	"github.com/bullpen-hq/bullpen/store"
)

// Tasks is what the agents need of the task layer; *tasks.Service
// provides it. The With methods run the caller's commit in the change's
// own transaction, so that a tool call's effect and its record commit
// together and a resumed turn never repeats it.
type Tasks interface {
	CreateWith(ctx context.Context, actor bullpen.Member, in bullpen.TaskInput, commit tasks.Commit) (bullpen.Task, error)
	List(ctx context.Context, actor bullpen.Member, f bullpen.TaskFilter) ([]bullpen.Task, error)
	ClaimWith(ctx context.Context, actor bullpen.Member, id int64, commit tasks.Commit) (bullpen.Task, error)
	UpdateWith(ctx context.Context, actor bullpen.Member, id int64, p bullpen.TaskPatch, commit tasks.Commit) (bullpen.Task, error)
	HandoffWith(ctx context.Context, actor bullpen.Member, id, to int64, message string, commit tasks.Commit) (bullpen.Task, error)
	SubmitWith(ctx context.Context, actor bullpen.Member, id int64, note string, turnID int64, commit tasks.Commit) (bullpen.Task, error)
	// ReviewApproved applies a human's answer to a task review's approval
	// in the transaction that stores the answer.
	ReviewApproved(tx *store.Tx, actor bullpen.Member, a bullpen.Approval) error
	// TurnFinished runs in the transaction that stores a turn's outcome.
	TurnFinished(tx *store.Tx, turn bullpen.Turn, threadID int64, ok bool, modelCalls int) error
}

var _ Tasks = (*tasks.Service)(nil)

const taskInputSchema = `"title":{"type":"string"},"body":{"type":"string","description":"Markdown"},"owner":{"type":"string","description":"handle of the member to assign; they are woken"},"labels":{"type":"array","items":{"type":"string"}},"depends_on":{"type":"array","items":{"type":"integer"},"description":"ids of tasks that must be done first"}`

// taskTools serves the task tools.
type taskTools struct {
	tasks Tasks
	dir   directory
}

// registerTaskTools registers the task tools, served by Config.Tasks as
// the calling member.
func (tt taskTools) registerTaskTools(r *Registry) error {
	return registerAll(r,
		Tool{Name: bullpen.ToolTaskCreate, Run: tt.taskCreate, Effect: EffectOffice,
			Description: "Create a task (its thread opens where you were woken), optionally with sub-tasks, each assigned to a member.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` + taskInputSchema + `,"review":{"type":"string","description":"who approves a submission: human, or a handle"},"subtasks":{"type":"array","items":{"type":"object","properties":{` +
				taskInputSchema + `,"review":{"type":"string"}},"required":["title"],"additionalProperties":false}}},"required":["title"],"additionalProperties":false}`)},
		Tool{Name: bullpen.ToolTaskList, Run: tt.taskList,
			Description: "List tasks: mine (default), open, blocked or review, optionally by label.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"filter":{"type":"string","enum":["mine","open","blocked","review"]},"label":{"type":"string"}},"additionalProperties":false}`)},
		Tool{Name: bullpen.ToolTaskClaim, Run: tt.taskClaim, Effect: EffectOffice,
			Description: "Claim a task: it becomes yours, unless someone else holds it.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"task_id":{"type":"integer"}},"required":["task_id"],"additionalProperties":false}`)},
		Tool{Name: bullpen.ToolTaskUpdate, Run: tt.taskUpdate, Effect: EffectOffice,
			Description: "Change a task's state (open, in_progress, blocked, done, cancelled), add a note to its thread, or set its wiki links (replacing them).",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"task_id":{"type":"integer"},"state":{"type":"string"},"note":{"type":"string"},"wiki_links":{"type":"array","items":{"type":"string"}}},"required":["task_id"],"additionalProperties":false}`)},
		Tool{Name: bullpen.ToolTaskHandoff, Run: tt.taskHandoff, Effect: EffectOffice,
			Description: "Hand a task to another member with a message; they are woken.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"task_id":{"type":"integer"},"to":{"type":"string","description":"handle"},"message":{"type":"string"}},"required":["task_id","to","message"],"additionalProperties":false}`)},
		Tool{Name: bullpen.ToolTaskSubmit, Run: tt.taskSubmit, Effect: EffectOffice,
			Description: "Submit your work on a task you own: to review when it needs one, else it is done.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"task_id":{"type":"integer"},"note":{"type":"string"}},"required":["task_id"],"additionalProperties":false}`)},
	)
}

// taskArgs is a task as a model describes it.
type taskArgs struct {
	Title     string     `json:"title"`
	Body      string     `json:"body"`
	Owner     string     `json:"owner"`
	Labels    []string   `json:"labels"`
	DependsOn []int64    `json:"depends_on"`
	Review    string     `json:"review"`
	Subtasks  []taskArgs `json:"subtasks"`
}

// input turns a model's task into a TaskInput, handles into members.
func (tt taskTools) taskInput(ctx context.Context, a taskArgs, channelID int64) (bullpen.TaskInput, error) {
	in := bullpen.TaskInput{Title: a.Title, Body: a.Body, ChannelID: channelID, Labels: a.Labels, DependsOn: a.DependsOn}
	var err error
	if a.Owner != "" {
		if in.OwnerID, err = tt.dir.memberNamed(ctx, a.Owner); err != nil {
			return in, err
		}
	}
	switch {
	case a.Review == "human":
		in.ReviewHuman = true
	case a.Review != "":
		if in.ReviewerID, err = tt.dir.memberNamed(ctx, a.Review); err != nil {
			return in, err
		}
	}
	for _, sub := range a.Subtasks {
		si, err := tt.taskInput(ctx, sub, channelID)
		if err != nil {
			return in, err
		}
		in.Subtasks = append(in.Subtasks, si)
	}
	if len(in.Subtasks) > 0 {
		in.WhenSubtasksDone = bullpen.SubtasksDoneClose
	}
	return in, nil
}

// taskWrite makes a task tool's write through Call.Write: do calls the
// task layer's With method with the commit hook that records the call's
// result in the change's transaction.
func taskWrite(c *Call, result func(bullpen.Task) string, do func(commit tasks.Commit) (bullpen.Task, error)) (string, error) {
	return c.Write(func(record Record) (string, error) {
		t, err := do(func(tx *store.Tx, t bullpen.Task) error { return record(tx, result(t)) })
		if err != nil {
			return "", err
		}
		return result(t), nil
	})
}

// taskLine is what a model reads of a task.
func taskLine(t bullpen.Task, handles map[int64]string) string {
	owner := "nobody"
	if t.OwnerID != 0 {
		owner = "@" + handles[t.OwnerID]
	}
	line := fmt.Sprintf("#%d [%s] %s, owner %s, thread %d", t.ID, t.State, t.Title, owner, t.ThreadID)
	if len(t.DependsOn) > 0 {
		line += fmt.Sprintf(", waits for %v", t.DependsOn)
	}
	if len(t.Labels) > 0 {
		line += ", labels " + strings.Join(t.Labels, ",")
	}
	return line
}

// taskResult is what a task tool returns: verb and the task's line.
func (tt taskTools) taskResult(ctx context.Context, verb string) func(bullpen.Task) string {
	handles := tt.dir.handles(ctx)
	return func(t bullpen.Task) string { return verb + taskLine(t, handles) }
}
