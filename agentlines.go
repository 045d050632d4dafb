package bullpen

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The timeline lines of the agents' event kinds (agentevent.go declares
// them).

func agentHired(ev Event, _ EventNames) (EventLine, error) {
	a, err := AgentOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	return EventLine{Text: fmt.Sprintf("%s was hired as %s (role %s)", at(a.Handle), a.DisplayName, a.Role)}, nil
}

func agentUpdated(ev Event, _ EventNames) (EventLine, error) {
	a, err := AgentOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	return EventLine{Text: at(a.Handle) + "'s role was updated"}, nil
}

func agentFired(ev Event, _ EventNames) (EventLine, error) {
	a, err := AgentFiredOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	return EventLine{Text: at(a.Handle) + " was let go"}, nil
}

// why says what woke an agent, as the end of a sentence.
var why = map[string]string{
	ReasonMention:  "mentioned",
	ReasonAll:      "@all",
	ReasonDM:       "a direct message",
	ReasonThread:   "a reply in its thread",
	ReasonApproval: "an approval answered",
}

func reasons(rs []string) string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		if w, ok := why[r]; ok {
			out = append(out, w)
		} else {
			out = append(out, r)
		}
	}
	return strings.Join(out, ", ")
}

func wakeQueued(ev Event, n EventNames) (EventLine, error) {
	w, err := WakeQueuedOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	text := fmt.Sprintf("%s was woken (%s)", at(w.Handle), join(reasons([]string{w.Reason}), where(n, ev.ChannelID)))
	link := ""
	if w.MessageID != 0 {
		link = channelLink(n, ev.ChannelID, w.MessageID)
	}
	return EventLine{Text: text, Link: link}, nil
}

// turnStarted: "@engineer started a turn (mentioned in #general)".
func turnStarted(ev Event, n EventNames) (EventLine, error) {
	t, err := TurnOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	text := fmt.Sprintf("%s started a turn (%s)", at(t.Handle), join(reasons(t.Reasons), where(n, ev.ChannelID)))
	return EventLine{Text: text, Link: turnLink(t.TurnID)}, nil
}

// turnFinished: "@engineer finished a turn in 1.2 s (3 steps, 1840 tokens)".
func turnFinished(ev Event, n EventNames) (EventLine, error) {
	t, err := TurnOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	parts := []string{plural(t.Steps, "step")}
	if t.Usage != nil {
		parts = append(parts, plural(t.Usage.InputTokens+t.Usage.OutputTokens, "token"))
	}
	text := fmt.Sprintf("%s finished a turn in %s (%s)", at(handleOf(t, n)), ms(t.DurationMS), strings.Join(parts, ", "))
	return EventLine{Text: text, Link: turnLink(t.TurnID)}, nil
}

func turnFailed(ev Event, n EventNames) (EventLine, error) {
	t, err := TurnOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	return EventLine{Text: at(handleOf(t, n)) + "'s turn failed: " + clipLine(t.Error, 120), Link: turnLink(t.TurnID)}, nil
}

func turnAbandoned(ev Event, n EventNames) (EventLine, error) {
	t, err := TurnOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	text := at(handleOf(t, n)) + "'s turn was abandoned"
	if t.Error != "" {
		text += ": " + clipLine(t.Error, 120)
	}
	return EventLine{Text: text, Link: turnLink(t.TurnID)}, nil
}

// handleOf is the turn's agent: finished turns may carry no handle.
func handleOf(t TurnEvent, n EventNames) string {
	if t.Handle != "" {
		return t.Handle
	}
	return n.MemberHandle(t.AgentID)
}

// doingWords say what a tool call is doing, after "@engineer is …". The chat's
// live line (static/chatlive.js, toolPhrase) says the same: keep the two
// in step.
var doingWords = map[string]string{
	ToolPostMessage:      "posting",
	ToolReadChannel:      "reading the channel",
	ToolReadThread:       "reading the thread",
	ToolListMembers:      "looking up the team",
	ToolWikiSearch:       "searching the wiki",
	ToolWikiRead:         "reading the wiki",
	ToolWikiWrite:        "writing the wiki",
	ToolSandboxReadFile:  "reading a file in its sandbox",
	ToolSandboxWriteFile: "writing a file in its sandbox",
	ToolSandboxListFiles: "listing files in its sandbox",
	ToolMemoryWrite:      "remembering",
	ToolMemorySearch:     "searching its memory",
	ToolMemoryForget:     "forgetting",
	ToolTaskCreate:       "creating a task",
	ToolTaskList:         "looking at the tasks",
	ToolTaskClaim:        "claiming a task",
	ToolTaskUpdate:       "updating a task",
	ToolTaskHandoff:      "handing a task off",
	ToolTaskSubmit:       "submitting a task",
}

// doing returns what a tool call with these arguments is doing:
// "running `make test` in its sandbox", "reading the wiki".
func doing(tool string, args json.RawMessage) string {
	if tool == ToolSandboxExec {
		var a struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(args, &a) == nil && a.Command != "" {
			return "running " + code(a.Command) + " in its sandbox"
		}
		return "running a command in its sandbox"
	}
	if d, ok := doingWords[tool]; ok {
		return d
	}
	return "using " + tool
}

// toolStarted: "@engineer started running `make test` in its sandbox".
func toolStarted(ev Event, _ EventNames) (EventLine, error) {
	t, err := ToolOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	return EventLine{Text: at(t.Handle) + " started " + doing(t.Tool, t.Arguments), Link: turnLink(t.TurnID)}, nil
}

// toolFinished: "@engineer called sandbox_exec → ok in 15 ms". The
// command's own exit code is the sandbox.exec_finished line's.
func toolFinished(ev Event, _ EventNames) (EventLine, error) {
	t, err := ToolOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	state := t.State
	if state == "" {
		state = "done"
	}
	text := fmt.Sprintf("%s called %s → %s in %s", at(t.Handle), t.Tool, state, ms(t.DurationMS))
	return EventLine{Text: text, Link: turnLink(t.TurnID)}, nil
}

// limitNames are the budgets as a person says them.
var limitNames = map[string]string{
	LimitHops:        "hop budget",
	LimitRate:        "rate limit",
	LimitSteps:       "step limit",
	LimitTurnTokens:  "turn token limit",
	LimitDailyTokens: "daily token budget",
	LimitTaskTokens:  "task token budget",
	LimitDeadline:    "turn deadline",
}

// limitReached: "@lead stopped: hop budget (6) reached in thread 42".
func limitReached(ev Event, n EventNames) (EventLine, error) {
	l, err := LimitOf(ev)
	if err != nil {
		return EventLine{}, err
	}
	name, ok := limitNames[l.Limit]
	if !ok {
		name = l.Limit
	}
	if l.Budget != 0 {
		name += fmt.Sprintf(" (%d)", l.Budget)
	}
	text := at(l.Handle) + " stopped: " + name + " reached"
	switch {
	case l.ThreadID != 0:
		text += fmt.Sprintf(" in thread %d", l.ThreadID)
		return EventLine{Text: text, Link: channelLink(n, ev.ChannelID, l.ThreadID)}, nil
	case l.TurnID != 0:
		return EventLine{Text: join(text, where(n, ev.ChannelID)), Link: turnLink(l.TurnID)}, nil
	}
	return EventLine{Text: join(text, where(n, ev.ChannelID)), Link: channelLink(n, ev.ChannelID, l.MessageID)}, nil
}
