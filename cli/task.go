package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bullpen-hq/bullpen"
)

const taskHelp = `
commands:
  list     list tasks (open ones by default)
  show     print one task
  create   create a task; its thread opens in a channel
  update   change a task's state, title, labels or dependencies
  claim    claim a task (exit code 5 when someone else holds it)
  release  give a task up
  handoff  hand a task to another member with a message
  submit   submit your work (to review, or done)
  review   approve a submission or request changes`

func (e *env) task(args []string) error {
	return e.sub("task", args, e.taskSubs(), taskHelp)
}

// taskSubs are the subcommands of bullpen task.
func (e *env) taskSubs() map[string]func([]string) error {
	return map[string]func([]string) error{
		"list": e.taskList, "show": e.taskShow, "create": e.taskCreate, "update": e.taskUpdate,
		"claim": e.taskClaim, "release": e.taskRelease, "handoff": e.taskHandoff, "submit": e.taskSubmit, "review": e.taskReview,
	}
}

func (e *env) taskList(args []string) error {
	fs := e.flags("task list", "task list [flags]", `
Lists tasks, newest first: the open ones unless --state names others.`)
	state := fs.String("state", "", "comma-separated states (open, in_progress, in_review, done, blocked, cancelled)")
	owner := fs.String("owner", "", "only this member's (@handle or ID; \"me\" for yours)")
	label := fs.String("label", "", "only tasks with this label")
	limit := fs.Int("limit", 50, "at most this many")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 0, 0); err != nil {
		return err
	}
	if err := e.connect(); err != nil {
		return err
	}
	f := bullpen.TaskFilter{Label: *label, Limit: *limit, Open: *state == ""}
	if *state != "" {
		f.States = strings.Split(*state, ",")
	}
	if *owner != "" {
		if f.OwnerID, err = e.memberID(*owner); err != nil {
			return err
		}
	}
	ts, err := e.c.Tasks(e.ctx, f)
	if err != nil || e.json {
		if err == nil {
			return e.out(ts, "")
		}
		return err
	}
	tw := tabwriter.NewWriter(e.io.Stdout, 0, 4, 2, ' ', 0)
	for _, t := range ts {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", t.ID, t.State, e.ownerName(t.OwnerID), t.Title)
	}
	return tw.Flush()
}

func (e *env) taskShow(args []string) error {
	fs := e.flags("task show", "task show [flags] ID", `
Prints a task: state, owner, dependencies, labels, tokens and body.`)
	id, _, err := e.idArg("task", fs, args, 1)
	if err != nil {
		return err
	}
	t, err := e.c.Task(e.ctx, id)
	if err != nil {
		return err
	}
	text := fmt.Sprintf("task %d: %s\nstate: %s\nowner: %s\ndepends on: %v\nlabels: %s\ntokens: %d in, %d out over %d turns\n\n%s",
		t.ID, t.Title, t.State, e.ownerName(t.OwnerID), t.DependsOn, strings.Join(t.Labels, ", "),
		t.Tokens.Input, t.Tokens.Output, t.Tokens.Turns, t.Body)
	return e.out(t, text)
}

// idArg parses flags and n positional arguments, the first the ID of a
// what (task, routine), and connects; it returns the ID and the other
// arguments.
func (e *env) idArg(what string, fs *flag.FlagSet, args []string, n int) (int64, []string, error) {
	pos, err := parse(fs, args)
	if err != nil {
		return 0, nil, err
	}
	if err := nargs(fs, pos, n, n); err != nil {
		return 0, nil, err
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(pos[0], "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, nil, usagef("%s ID %q must be a positive integer", what, pos[0])
	}
	return id, pos[1:], e.connect()
}

// memberID finds a member by @handle, ID or "me".
func (e *env) memberID(name string) (int64, error) {
	if name == "me" {
		me, err := e.c.Me(e.ctx)
		return me.ID, err
	}
	name = strings.TrimPrefix(name, "@")
	if id, err := strconv.ParseInt(name, 10, 64); err == nil {
		return id, nil
	}
	ms, err := e.c.Members(e.ctx)
	if err != nil {
		return 0, err
	}
	for _, m := range ms {
		if m.Handle == name {
			return m.ID, nil
		}
	}
	return 0, usagef("no member @%s", name)
}

// ownerName shows an owner by handle (its ID when unknown, - for none).
func (e *env) ownerName(id int64) string {
	if id == 0 {
		return "-"
	}
	if e.handles == nil {
		e.handles = map[int64]string{}
		if ms, err := e.c.Members(e.ctx); err == nil {
			for _, m := range ms {
				e.handles[m.ID] = "@" + m.Handle
			}
		}
	}
	if h, ok := e.handles[id]; ok {
		return h
	}
	return strconv.FormatInt(id, 10)
}
