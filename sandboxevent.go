package bullpen

import (
	"fmt"
	"strings"
)

// Sandbox event types, written by package sandboxes. Each is visible to the sandbox's owner (and admins).
const (
	// EventSandboxCreated: a sandbox was created (payload: a SandboxStateEvent).
	EventSandboxCreated = "sandbox.created"
	// EventSandboxState: a sandbox changed state (started, paused, resumed,
	// stopped, terminated, timed out, re-adopted, crashed).
	EventSandboxState = "sandbox.state"
	// EventSandboxExecStarted and EventSandboxExecFinished bracket a command (payload:
	// an SandboxExecEvent).
	EventSandboxExecStarted  = "sandbox.exec_started"
	EventSandboxExecFinished = "sandbox.exec_finished"
	// EventSandboxOutput is an ephemeral chunk of a command's output (payload: an
	// SandboxOutputEvent); never stored.
	EventSandboxOutput = "sandbox.output"
)

// SandboxStateEvent is the payload of EventSandboxCreated and EventSandboxState.
type SandboxStateEvent struct {
	ID      string `json:"id"`
	Name    string `json:"name,omitempty"`
	OwnerID int64  `json:"owner_id"`
	Image   string `json:"image,omitempty"`
	State   string `json:"state"`
	// Event is what happened: created, started, paused, resumed, stopped,
	// terminated, timed_out, adopted, crashed.
	Event string `json:"event"`
	// Detail: for timed_out, "timeout" or "idle".
	Detail string `json:"detail,omitempty"`
}

// SandboxExecEvent is the payload of EventSandboxExecStarted and EventSandboxExecFinished.
type SandboxExecEvent struct {
	ID      string `json:"id"`
	Name    string `json:"name,omitempty"`
	OwnerID int64  `json:"owner_id"`
	ExecID  string `json:"exec_id"`
	Command string `json:"command"`
	ByID    int64  `json:"by_id"` // the member who ran it
	// PTY: the command ran on a terminal (the dashboard's terminal, an
	// E2B PTY); Stdout holds the text its screen showed, not the raw
	// escape codes.
	PTY bool `json:"pty,omitempty"`
	// Ended (finished only): its user closed it (a terminal's window) while
	// it ran. That is how a terminal session ends, not a failure; a command
	// killed any other way is not Ended.
	Ended      bool   `json:"ended,omitempty"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	Signal     string `json:"signal,omitempty"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	Error      string `json:"error,omitempty"`
	// Stdout and Stderr (finished only) are the head and tail of each
	// stream, kept so the exec history shows output after a reload;
	// StdoutBytes and StderrBytes are how much was written in all.
	Stdout      string `json:"stdout,omitempty"`
	Stderr      string `json:"stderr,omitempty"`
	StdoutBytes int64  `json:"stdout_bytes,omitempty"`
	StderrBytes int64  `json:"stderr_bytes,omitempty"`
	// OutputWithheld: the sandbox holds secrets, so no output is stored.
	OutputWithheld bool `json:"output_withheld,omitempty"`
}

// SandboxOutputEvent is one chunk of live output. Offset is where Data starts in
// its stream, so a client that also reads the exec stream can merge both
// without duplicates. Data is text when it is valid UTF-8, else DataB64.
type SandboxOutputEvent struct {
	ID        string `json:"id"`
	ExecID    string `json:"exec_id"`
	Stream    string `json:"stream"`
	Offset    int64  `json:"off"`
	Data      string `json:"data,omitempty"`
	DataB64   []byte `json:"data_b64,omitempty"`
	Truncated bool   `json:"truncated,omitempty"` // the live log stops here; the command goes on
}

// SandboxStateOf decodes a sandbox.created or sandbox.state event.
func SandboxStateOf(ev Event) (SandboxStateEvent, error) {
	return DecodePayload[SandboxStateEvent](ev, EventSandboxCreated, EventSandboxState)
}

// SandboxExecOf decodes a sandbox.exec_started or sandbox.exec_finished event.
func SandboxExecOf(ev Event) (SandboxExecEvent, error) {
	return DecodePayload[SandboxExecEvent](ev, EventSandboxExecStarted, EventSandboxExecFinished)
}

// SandboxOutputOf decodes a sandbox.output event.
func SandboxOutputOf(ev Event) (SandboxOutputEvent, error) {
	return DecodePayload[SandboxOutputEvent](ev, EventSandboxOutput)
}

func sandboxKinds() []EventKind {
	return []EventKind{
		{Name: EventSandboxCreated, Label: "Sandbox created", Group: GroupSandbox, Visibility: VisibleOwner, Actor: "owner_id",
			Decode: decoder(SandboxStateOf), Line: sandboxState},
		{Name: EventSandboxState, Label: "Sandbox state changed", Group: GroupSandbox, Visibility: VisibleOwner, Actor: "owner_id",
			Decode: decoder(SandboxStateOf), Line: sandboxState},
		{Name: EventSandboxExecStarted, Label: "Command started", Group: GroupCommands, Visibility: VisibleOwner, Actor: "by_id", Detail: true,
			Decode: decoder(SandboxExecOf), Line: execStarted},
		{Name: EventSandboxExecFinished, Label: "Command finished", Group: GroupCommands, Visibility: VisibleOwner, Actor: "by_id",
			Decode: decoder(SandboxExecOf), Line: execFinished},
		{Name: EventSandboxOutput, Label: "Command output", Visibility: VisibleOwner, Ephemeral: true,
			Decode: decoder(SandboxOutputOf)},
		sandboxSettingsKind(),
	}
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

func sandboxState(ev Event, n EventNames) (EventLine, error) {
	s, err := SandboxStateOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	verb, ok := stateWords[s.Event]
	if !ok {
		verb = s.Event
	}
	if s.Detail != "" {
		verb += " (" + s.Detail + ")"
	}
	text := fmt.Sprintf("%s's sandbox %s %s", actor(n, s.OwnerID), sandboxName(s.Name, s.ID), verb)
	return EventLine{Text: text, Link: sandboxLink(s.ID, "")}, nil
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

func execStarted(ev Event, n EventNames) (EventLine, error) {
	x, err := SandboxExecOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	text := fmt.Sprintf("%s is running %s in %s", actor(n, x.ByID), code(shellCommand(x.Command)), sandboxName(x.Name, x.ID))
	if x.PTY {
		text = fmt.Sprintf("%s opened a terminal in %s", actor(n, x.ByID), sandboxName(x.Name, x.ID))
	}
	return EventLine{Text: text, Link: sandboxLink(x.ID, x.ExecID)}, nil
}

// execFinished: "@engineer ran `df -h` → exit 0 in 12 ms".
func execFinished(ev Event, n EventNames) (EventLine, error) {
	x, err := SandboxExecOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	var outcome string
	switch {
	case x.PTY && x.Ended:
		text := fmt.Sprintf("%s closed a terminal in %s after %s", actor(n, x.ByID), sandboxName(x.Name, x.ID), ms(x.DurationMS))
		return EventLine{Text: text, Link: sandboxLink(x.ID, x.ExecID)}, nil
	case x.TimedOut:
		outcome = "timed out"
	case x.Error != "":
		outcome = "failed: " + clipLine(x.Error, 80)
	case x.Signal != "":
		outcome = "killed by " + x.Signal
	case x.ExitCode != nil:
		outcome = fmt.Sprintf("exit %d", *x.ExitCode)
	default:
		outcome = "finished"
	}
	text := fmt.Sprintf("%s ran %s → %s in %s", actor(n, x.ByID), code(shellCommand(x.Command)), outcome, ms(x.DurationMS))
	if x.PTY {
		text = fmt.Sprintf("%s's terminal in %s ended: %s after %s", actor(n, x.ByID), sandboxName(x.Name, x.ID), outcome, ms(x.DurationMS))
	}
	return EventLine{Text: text, Link: sandboxLink(x.ID, x.ExecID)}, nil
}
