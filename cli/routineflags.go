package cli

import (
	"flag"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// routineFlags are the flags bullpen routine create and edit share; an
// empty one is not given.
type routineFlags struct {
	cron, tz, every, channel, agent, prompt string
	task, taskBody, taskOwner, taskLabels   string
	skip, skipLabel                         string
}

func (rf *routineFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&rf.cron, "cron", "", "a five-field cron schedule, e.g. \"0 9 * * 1-5\"")
	fs.StringVar(&rf.tz, "tz", "", "the cron schedule's IANA time zone (default UTC)")
	fs.StringVar(&rf.every, "every", "", "an interval schedule instead, e.g. 1h or 30m (at least 1s)")
	fs.StringVar(&rf.channel, "channel", "", "the channel it posts or creates in (name or ID; default general)")
	fs.StringVar(&rf.agent, "agent", "", "the wake action: the agent to wake (@handle or ID)")
	fs.StringVar(&rf.prompt, "prompt", "", "the wake action: what the agent is told")
	fs.StringVar(&rf.task, "task", "", "the task action: the title of the task to create")
	fs.StringVar(&rf.taskBody, "task-body", "", "the task action: the task's Markdown body")
	fs.StringVar(&rf.taskOwner, "task-owner", "", "the task action: assign the task to this member (@handle or ID)")
	fs.StringVar(&rf.taskLabels, "task-labels", "", "the task action: comma-separated labels")
	fs.StringVar(&rf.skip, "skip", "", "skip a tick: no_new_messages, no_open_label, or never")
	fs.StringVar(&rf.skipLabel, "skip-label", "", "the label of --skip no_open_label")
}

// routineInput sets in's fields from the flags given, resolving names.
func (e *env) routineInput(rf *routineFlags, in *bullpen.RoutineInput) error {
	str := func(v string) *string { return &v }
	switch {
	case rf.cron != "" && rf.every != "":
		return usagef("give one schedule: --cron or --every")
	case rf.cron != "":
		var none int64
		in.Cron, in.IntervalSec = str(rf.cron), &none
	case rf.every != "":
		d, err := time.ParseDuration(rf.every)
		if err != nil || d < time.Second {
			return usagef("--every %q must be a duration of at least 1s, like 30m or 1h", rf.every)
		}
		secs := int64(d / time.Second)
		in.IntervalSec, in.Cron, in.TZ = &secs, str(""), str("")
	}
	if rf.tz != "" {
		if rf.every != "" {
			return usagef("--tz applies to a --cron schedule only")
		}
		in.TZ = str(rf.tz)
	}
	if rf.channel != "" {
		if err := e.routineChannel(rf.channel, in); err != nil {
			return err
		}
	}
	if rf.agent != "" {
		id, err := e.memberID(rf.agent)
		if err != nil {
			return err
		}
		in.AgentID, in.Action = &id, str(bullpen.RoutineWake)
	}
	if rf.prompt != "" {
		in.Prompt = str(rf.prompt)
	}
	if rf.task != "" {
		t := &bullpen.TaskInput{Title: rf.task, Body: rf.taskBody, Labels: splitList(rf.taskLabels)}
		if rf.taskOwner != "" {
			var err error
			if t.OwnerID, err = e.memberID(rf.taskOwner); err != nil {
				return err
			}
		}
		in.Task, in.Action = t, str(bullpen.RoutineTask)
	} else if rf.taskBody != "" || rf.taskOwner != "" || rf.taskLabels != "" {
		return usagef("--task-body, --task-owner and --task-labels go with --task TITLE")
	}
	switch rf.skip {
	case "":
	case "never":
		in.Skip = str(bullpen.SkipNever)
	default:
		in.Skip = str(rf.skip)
	}
	if rf.skipLabel != "" {
		in.SkipLabel = str(rf.skipLabel)
	}
	return nil
}

// routineChannel sets the channel named (or numbered) name.
func (e *env) routineChannel(name string, in *bullpen.RoutineInput) error {
	ch, err := e.c.ChannelNamed(e.ctx, name)
	if err != nil {
		return err
	}
	in.ChannelID = &ch.ID
	return nil
}
