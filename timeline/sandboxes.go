package timeline

import (
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandboxes"
)

func init() {
	register(sandboxes.EventCreated, sandboxState)
	register(sandboxes.EventState, sandboxState)
	register(sandboxes.EventExecStarted, execStarted)
	register(sandboxes.EventExecFinished, execFinished)
}

// sandboxLink opens a sandbox in the Sandboxes panel; with an exec id, the
// command with its output in the sandbox's exec history.
func sandboxLink(id, execID string) string {
	if execID != "" {
		return fmt.Sprintf("#sandbox/%s/exec/%s", id, execID)
	}
	return "#sandbox/" + id
}

func sandboxName(name, id string) string {
	if name != "" {
		return name
	}
	return id
}

// stateWords are the sandbox events as verbs.
var stateWords = map[string]string{
	"created": "was created", "started": "started", "paused": "was paused", "resumed": "resumed",
	"stopped": "stopped", "terminated": "was terminated", "timed_out": "timed out",
	"adopted": "was re-adopted after a restart", "crashed": "crashed",
}

func sandboxState(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	s, err := sandboxes.StateOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	verb, ok := stateWords[s.Event]
	if !ok {
		verb = s.Event
	}
	if s.Detail != "" {
		verb += " (" + s.Detail + ")"
	}
	text := fmt.Sprintf("%s's sandbox %s %s", actor(n, s.OwnerID), sandboxName(s.Name, s.ID), verb)
	return bullpen.EventLine{Text: text, Link: sandboxLink(s.ID, "")}, nil
}

// shellCommand is the command as the person typed it: agents' and the
// dashboard's commands run through "/bin/sh -c", which says nothing.
func shellCommand(cmd string) string {
	for _, sh := range []string{"/bin/sh -c ", "sh -c ", "/bin/bash -c ", "bash -c "} {
		if rest, ok := strings.CutPrefix(cmd, sh); ok {
			return rest
		}
	}
	return cmd
}

func execStarted(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	x, err := sandboxes.ExecOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	text := fmt.Sprintf("%s is running %s in %s", actor(n, x.ByID), code(shellCommand(x.Command)), sandboxName(x.Name, x.ID))
	return bullpen.EventLine{Text: text, Link: sandboxLink(x.ID, x.ExecID)}, nil
}

// execFinished: "@engineer ran `df -h` → exit 0 in 12 ms".
func execFinished(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	x, err := sandboxes.ExecOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	var outcome string
	switch {
	case x.TimedOut:
		outcome = "timed out"
	case x.Error != "":
		outcome = "failed: " + clip(x.Error, 80)
	case x.Signal != "":
		outcome = "killed by " + x.Signal
	case x.ExitCode != nil:
		outcome = fmt.Sprintf("exit %d", *x.ExitCode)
	default:
		outcome = "finished"
	}
	text := fmt.Sprintf("%s ran %s → %s in %s", actor(n, x.ByID), code(shellCommand(x.Command)), outcome, ms(x.DurationMS))
	return bullpen.EventLine{Text: text, Link: sandboxLink(x.ID, x.ExecID)}, nil
}
