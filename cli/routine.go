package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bullpen-hq/bullpen"
)

const routineHelp = `
commands:
  list     list the routines with their last and next run
  show     print one routine
  create   create a routine: wake an agent or create a task on a schedule
  edit     change a routine: turn it on or off, its schedule, prompt, skip
  delete   delete a routine (its ticks stay)
  ticks    list a routine's latest ticks: fired or skipped, and why`

func (e *env) routine(args []string) error {
	return e.sub("routine", args, e.routineSubs(), routineHelp)
}

// routineSubs are the subcommands of bullpen routine.
func (e *env) routineSubs() map[string]func([]string) error {
	return map[string]func([]string) error{
		"list": e.routineList, "show": e.routineShow, "create": e.routineCreate, "edit": e.routineEdit,
		"delete": e.routineDelete, "ticks": e.routineTicks,
	}
}

func (e *env) routineList(args []string) error {
	fs := e.flags("routine list", "routine list [flags]", `
Lists the routines: ID, on or off, schedule, action, last run (and why
it was skipped), next run and name.`)
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
	rs, err := e.c.Routines(e.ctx)
	if err != nil || e.json {
		if err == nil {
			return e.out(rs, "")
		}
		return err
	}
	tw := tabwriter.NewWriter(e.io.Stdout, 0, 4, 2, ' ', 0)
	for _, r := range rs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\tlast %s\tnext %s\t%s\n", r.ID, onOff(r.Enabled), schedule(r), r.Action,
			lastRun(r), when(r.NextRunAt), r.Name)
	}
	return tw.Flush()
}

func (e *env) routineShow(args []string) error {
	fs := e.flags("routine show", "routine show [flags] ID", `
Prints a routine: schedule, action, skip condition, last and next run.`)
	id, _, err := e.idArg("routine", fs, args, 1)
	if err != nil {
		return err
	}
	r, err := e.c.Routine(e.ctx, id)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("wake %s: %s", e.ownerName(r.AgentID), r.Prompt)
	if r.Action == bullpen.RoutineTask && r.Task != nil {
		what = fmt.Sprintf("create task %q", r.Task.Title)
	}
	skip := r.Skip
	if skip == "" {
		skip = "never"
	} else if r.SkipLabel != "" {
		skip += " " + r.SkipLabel
	}
	text := fmt.Sprintf("routine %d: %s\n%s\nschedule: %s\nchannel: %d\naction: %s\nskip: %s\nlast run: %s\nnext run: %s",
		r.ID, r.Name, onOff(r.Enabled), schedule(r), r.ChannelID, what, skip, lastRun(r), when(r.NextRunAt))
	return e.out(r, text)
}

func (e *env) routineCreate(args []string) error {
	fs := e.flags("routine create", "routine create [flags] NAME", `
Creates a routine. Its schedule is --cron EXPR (five fields, read in --tz)
or --every DURATION. Its action wakes --agent with --prompt (a message in
--channel that mentions it), or creates the task --task TITLE there. Only
people create routines.`)
	var rf routineFlags
	rf.define(fs)
	off := fs.Bool("off", false, "create it turned off")
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
	name := strings.Join(pos, " ")
	in := bullpen.RoutineInput{Name: &name}
	if err := e.routineInput(&rf, &in); err != nil {
		return err
	}
	switch {
	case (rf.agent == "") == (rf.task == ""):
		return usagef("give exactly one action: --agent @h --prompt TEXT, or --task TITLE")
	case in.Cron == nil && in.IntervalSec == nil:
		return usagef("give a schedule: --cron EXPR or --every DURATION")
	}
	if in.ChannelID == nil {
		if err := e.routineChannel(bullpen.GeneralChannel, &in); err != nil {
			return err
		}
	}
	if *off {
		in.Enabled = new(bool)
	}
	r, err := e.c.CreateRoutine(e.ctx, in)
	if err != nil {
		return err
	}
	return e.out(r, fmt.Sprintf("created routine %d, next run %s", r.ID, when(r.NextRunAt)))
}

func (e *env) routineEdit(args []string) error {
	fs := e.flags("routine edit", "routine edit [flags] ID", `
Changes a routine; only the flags given change. --on and --off turn it on
and off; turning it on or changing its schedule starts it from now.`)
	var rf routineFlags
	rf.define(fs)
	name := fs.String("name", "", "a new name")
	on := fs.Bool("on", false, "turn it on")
	off := fs.Bool("off", false, "turn it off")
	id, _, err := e.idArg("routine", fs, args, 1)
	if err != nil {
		return err
	}
	var in bullpen.RoutineInput
	if err := e.routineInput(&rf, &in); err != nil {
		return err
	}
	if *name != "" {
		in.Name = name
	}
	switch {
	case *on && *off:
		return usagef("give at most one of --on and --off")
	case *on || *off:
		in.Enabled = on
	}
	if in == (bullpen.RoutineInput{}) {
		return usagef("nothing to change: give a flag (see bullpen routine edit --help)")
	}
	r, err := e.c.UpdateRoutine(e.ctx, id, in)
	if err != nil {
		return err
	}
	return e.out(r, fmt.Sprintf("routine %d: %s, %s, next run %s", r.ID, onOff(r.Enabled), schedule(r), when(r.NextRunAt)))
}

func (e *env) routineDelete(args []string) error {
	fs := e.flags("routine delete", "routine delete [flags] ID", `
Deletes a routine. Its ticks stay on record.`)
	id, _, err := e.idArg("routine", fs, args, 1)
	if err != nil {
		return err
	}
	if err := e.c.DeleteRoutine(e.ctx, id); err != nil {
		return err
	}
	return e.out(map[string]int64{"deleted": id}, fmt.Sprintf("deleted routine %d", id))
}

func (e *env) routineTicks(args []string) error {
	fs := e.flags("routine ticks", "routine ticks [flags] ID", `
Lists a routine's latest ticks, newest first: when each was due, fired or
skipped (and why), the ticks downtime folded into it, and the message or
task it made.`)
	id, _, err := e.idArg("routine", fs, args, 1)
	if err != nil {
		return err
	}
	ts, err := e.c.RoutineTicks(e.ctx, id)
	if err != nil || e.json {
		if err == nil {
			return e.out(ts, "")
		}
		return err
	}
	tw := tabwriter.NewWriter(e.io.Stdout, 0, 4, 2, ' ', 0)
	for _, k := range ts {
		made := ""
		switch {
		case k.TaskID != 0:
			made = fmt.Sprintf("task %d", k.TaskID)
		case k.MessageID != 0:
			made = fmt.Sprintf("message %d", k.MessageID)
		}
		missed := ""
		if k.Missed > 0 {
			missed = fmt.Sprintf("+%d missed", k.Missed)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.DueAt.Local().Format(time.DateTime), k.State, k.Reason, missed, made)
	}
	return tw.Flush()
}

// onOff says whether a routine is on.
func onOff(enabled bool) string {
	if enabled {
		return "on"
	}
	return "off"
}

// schedule is a routine's schedule as a person reads it.
func schedule(r bullpen.Routine) string {
	if r.Cron != "" {
		tz := r.TZ
		if tz == "" {
			tz = "UTC"
		}
		return fmt.Sprintf("cron %q %s", r.Cron, tz)
	}
	return "every " + (time.Duration(r.IntervalSec) * time.Second).String()
}

// lastRun is the last tick's time and state, with why it was skipped.
func lastRun(r bullpen.Routine) string {
	if r.LastRunAt == nil {
		return "never"
	}
	s := when(r.LastRunAt) + " " + r.LastState
	if r.LastReason != "" {
		s += " (" + r.LastReason + ")"
	}
	return s
}

// when is a time in the local zone, or - for none.
func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Local().Format(time.DateTime)
}
