package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

func (e *env) taskCreate(args []string) error {
	fs := e.flags("task create", "task create [flags] TITLE", `
Creates a task. Its thread opens in --channel; an owner given with
--owner is mentioned there, which wakes an agent.`)
	channel := fs.String("channel", bullpen.GeneralChannel, "the channel of the task's thread (name or ID)")
	body := fs.String("body", "", "the task's Markdown body")
	owner := fs.String("owner", "", "assign it to this member (@handle or ID)")
	parent := fs.Int64("parent", 0, "the parent task's ID (a sub-task)")
	deps := fs.String("deps", "", "comma-separated IDs of the tasks it waits for")
	labels := fs.String("labels", "", "comma-separated labels")
	review := fs.String("review", "", "who must approve a submission: human, or a member (@handle)")
	whenSubs := fs.String("when-subtasks-done", "", "close or review: what the task does once its sub-tasks are done")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 1, -1); err != nil {
		return err
	}
	if err := e.connect(); err != nil {
		return err
	}
	in := bullpen.TaskInput{Title: strings.Join(pos, " "), Body: *body, ParentID: *parent, WhenSubtasksDone: *whenSubs, Labels: splitList(*labels)}
	ch, err := e.c.ChannelNamed(e.ctx, *channel)
	if err != nil {
		return err
	}
	in.ChannelID = ch.ID
	if in.DependsOn, err = ids(*deps); err != nil {
		return err
	}
	if *owner != "" {
		if in.OwnerID, err = e.memberID(*owner); err != nil {
			return err
		}
	}
	switch {
	case *review == "human":
		in.ReviewHuman = true
	case *review != "":
		if in.ReviewerID, err = e.memberID(*review); err != nil {
			return err
		}
	}
	t, err := e.c.CreateTask(e.ctx, in)
	if err != nil {
		return err
	}
	return e.out(t, fmt.Sprintf("created task %d", t.ID))
}

func (e *env) taskUpdate(args []string) error {
	fs := e.flags("task update", "task update [flags] ID", `
Changes a task. Only the flags given change; --note is posted in the
task's thread with the change.`)
	state := fs.String("state", "", "the new state")
	title := fs.String("title", "", "a new title")
	labels := fs.String("labels", "", "replace the labels (comma-separated; - for none)")
	deps := fs.String("deps", "", "replace the dependencies (comma-separated IDs; - for none)")
	note := fs.String("note", "", "a note for the task's thread")
	id, _, err := e.idArg("task", fs, args, 1)
	if err != nil {
		return err
	}
	p := bullpen.TaskPatch{Note: *note}
	if *state != "" {
		p.State = state
	}
	if *title != "" {
		p.Title = title
	}
	if *labels != "" {
		l := splitList(strings.TrimPrefix(*labels, "-"))
		p.Labels = &l
	}
	if *deps != "" {
		d, err := ids(strings.TrimPrefix(*deps, "-"))
		if err != nil {
			return err
		}
		p.DependsOn = &d
	}
	t, err := e.c.UpdateTask(e.ctx, id, p)
	return e.taskDone(t, err)
}

func (e *env) taskClaim(args []string) error {
	fs := e.flags("task claim", "task claim [flags] ID", `
Claims a task for you. When someone else holds it, nothing changes, the
owner is named and the exit code is 5.`)
	id, _, err := e.idArg("task", fs, args, 1)
	if err != nil {
		return err
	}
	t, err := e.c.ClaimTask(e.ctx, id)
	var lost *bullpen.TaskClaimedError
	if asLost(err, &lost) {
		return fmt.Errorf("task %d is held by %s (%w)", id, e.ownerName(lost.Task.OwnerID), err)
	}
	return e.taskDone(t, err)
}

func (e *env) taskRelease(args []string) error {
	fs := e.flags("task release", "task release [flags] ID", `
Gives a task up: it returns to open without owner.`)
	note := fs.String("note", "", "why")
	id, _, err := e.idArg("task", fs, args, 1)
	if err != nil {
		return err
	}
	t, err := e.c.ReleaseTask(e.ctx, id, *note)
	return e.taskDone(t, err)
}

func (e *env) taskHandoff(args []string) error {
	fs := e.flags("task handoff", "task handoff [flags] ID MEMBER MESSAGE", `
Hands a task to MEMBER (@handle or ID). MESSAGE is posted in the task's
thread, mentioning them, which wakes an agent.`)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 3, -1); err != nil {
		return err
	}
	id, _, err := e.idArg("task", fs, pos[:1], 1)
	if err != nil {
		return err
	}
	to, err := e.memberID(pos[1])
	if err != nil {
		return err
	}
	t, err := e.c.HandoffTask(e.ctx, id, to, strings.Join(pos[2:], " "))
	return e.taskDone(t, err)
}

func (e *env) taskSubmit(args []string) error {
	fs := e.flags("task submit", "task submit [flags] ID", `
Submits your work on a task: to review when it needs one, else done.`)
	note := fs.String("note", "", "what you did, for the reviewer")
	id, _, err := e.idArg("task", fs, args, 1)
	if err != nil {
		return err
	}
	t, err := e.c.SubmitTask(e.ctx, id, *note)
	return e.taskDone(t, err)
}

func (e *env) taskReview(args []string) error {
	fs := e.flags("task review", "task review [flags] ID", `
Answers a submission: --approve makes the task done; --changes NOTE sends
it back to its owner with the note.`)
	approve := fs.Bool("approve", false, "approve the work")
	changes := fs.String("changes", "", "request changes, saying what")
	id, _, err := e.idArg("task", fs, args, 1)
	if err != nil {
		return err
	}
	if *approve == (*changes != "") {
		return usagef("give exactly one of --approve and --changes NOTE")
	}
	t, err := e.c.ReviewTask(e.ctx, id, *approve, *changes)
	return e.taskDone(t, err)
}

// taskDone prints a changed task's new state.
func (e *env) taskDone(t bullpen.Task, err error) error {
	if err != nil {
		return err
	}
	return e.out(t, fmt.Sprintf("task %d: %s, owner %s", t.ID, t.State, e.ownerName(t.OwnerID)))
}

func splitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func ids(s string) ([]int64, error) {
	var out []int64
	for _, p := range splitList(s) {
		id, err := strconv.ParseInt(strings.TrimPrefix(p, "#"), 10, 64)
		if err != nil || id <= 0 {
			return nil, usagef("%q is not a task ID", p)
		}
		out = append(out, id)
	}
	return out, nil
}

func asLost(err error, lost **bullpen.TaskClaimedError) bool { return errors.As(err, lost) }
