package agents

import (
	"context"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/tasks"
)

func (tt taskTools) taskCreate(ctx context.Context, c *Call) (string, error) {
	var a taskArgs
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	if c.Channel.ID == 0 {
		return "", bullpen.Errorf(bullpen.EINVALID, "task_create works inside a turn: the task's thread opens in its channel")
	}
	in, err := tt.taskInput(ctx, a, c.Channel.ID)
	if err != nil {
		return "", err
	}
	handles := tt.dir.handles(ctx)
	result := func(t bullpen.Task) string {
		out := "created " + taskLine(t, handles)
		if len(in.Subtasks) > 0 {
			out += "; its sub-tasks are listed by task_list"
		}
		return out
	}
	return taskWrite(c, result, func(commit tasks.Commit) (bullpen.Task, error) { return tt.tasks.CreateWith(ctx, c.Member, in, commit) })
}

func (tt taskTools) taskList(ctx context.Context, c *Call) (string, error) {
	var a struct {
		Filter string `json:"filter"`
		Label  string `json:"label"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	f := bullpen.TaskFilter{Label: a.Label, Limit: 30}
	switch a.Filter {
	case "", "mine":
		f.OwnerID, f.Open = c.Member.ID, true
	case "open":
		f.States = []string{bullpen.TaskOpen}
	case "blocked":
		f.States = []string{bullpen.TaskBlocked}
	case "review":
		f.States = []string{bullpen.TaskInReview}
	default:
		return "", bullpen.Errorf(bullpen.EINVALID, "filter must be mine, open, blocked or review")
	}
	ts, err := tt.tasks.List(ctx, c.Member, f)
	if err != nil {
		return "", err
	}
	if len(ts) == 0 {
		return "(no tasks)", nil
	}
	handles := tt.dir.handles(ctx)
	lines := make([]string, len(ts))
	for i, t := range ts {
		lines[i] = taskLine(t, handles)
	}
	return strings.Join(lines, "\n"), nil
}

func (tt taskTools) taskClaim(ctx context.Context, c *Call) (string, error) {
	var a struct {
		TaskID int64 `json:"task_id"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	return taskWrite(c, tt.taskResult(ctx, "claimed "), func(commit tasks.Commit) (bullpen.Task, error) {
		return tt.tasks.ClaimWith(ctx, c.Member, a.TaskID, commit)
	})
}

func (tt taskTools) taskUpdate(ctx context.Context, c *Call) (string, error) {
	var a struct {
		TaskID    int64    `json:"task_id"`
		State     string   `json:"state"`
		Note      string   `json:"note"`
		WikiLinks []string `json:"wiki_links"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	p := bullpen.TaskPatch{Note: a.Note}
	if a.State != "" {
		p.State = &a.State
	}
	if len(a.WikiLinks) > 0 {
		links := make([]bullpen.TaskLink, len(a.WikiLinks))
		for i, l := range a.WikiLinks {
			links[i] = bullpen.TaskLink{Kind: bullpen.TaskLinkWiki, Target: l}
		}
		p.Links = &links
	}
	return taskWrite(c, tt.taskResult(ctx, "updated "), func(commit tasks.Commit) (bullpen.Task, error) {
		return tt.tasks.UpdateWith(ctx, c.Member, a.TaskID, p, commit)
	})
}

func (tt taskTools) taskHandoff(ctx context.Context, c *Call) (string, error) {
	var a struct {
		TaskID  int64  `json:"task_id"`
		To      string `json:"to"`
		Message string `json:"message"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	to, err := tt.dir.memberNamed(ctx, a.To)
	if err != nil {
		return "", err
	}
	return taskWrite(c, tt.taskResult(ctx, "handed off "), func(commit tasks.Commit) (bullpen.Task, error) {
		return tt.tasks.HandoffWith(ctx, c.Member, a.TaskID, to, a.Message, commit)
	})
}

func (tt taskTools) taskSubmit(ctx context.Context, c *Call) (string, error) {
	var a struct {
		TaskID int64  `json:"task_id"`
		Note   string `json:"note"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	return taskWrite(c, tt.taskResult(ctx, "submitted "), func(commit tasks.Commit) (bullpen.Task, error) {
		return tt.tasks.SubmitWith(ctx, c.Member, a.TaskID, a.Note, c.TurnID, commit)
	})
}
