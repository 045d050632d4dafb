package timeline

import (
	"encoding/json"
	"fmt"

	"github.com/bullpen-hq/bullpen"
)

// doing says what a tool call is doing, after "@engineer is …". The chat's
// live line (static/chatlive.js, toolPhrase) says the same: keep the two
// in step.
var doing = map[string]string{
	bullpen.ToolPostMessage:      "posting",
	bullpen.ToolReadChannel:      "reading the channel",
	bullpen.ToolReadThread:       "reading the thread",
	bullpen.ToolListMembers:      "looking up the team",
	bullpen.ToolWikiSearch:       "searching the wiki",
	bullpen.ToolWikiRead:         "reading the wiki",
	bullpen.ToolWikiWrite:        "writing the wiki",
	bullpen.ToolSandboxReadFile:  "reading a file in its sandbox",
	bullpen.ToolSandboxWriteFile: "writing a file in its sandbox",
	bullpen.ToolSandboxListFiles: "listing files in its sandbox",
	bullpen.ToolMemoryWrite:      "remembering",
	bullpen.ToolMemorySearch:     "searching its memory",
	bullpen.ToolMemoryForget:     "forgetting",
	bullpen.ToolTaskCreate:       "creating a task",
	bullpen.ToolTaskList:         "looking at the tasks",
	bullpen.ToolTaskClaim:        "claiming a task",
	bullpen.ToolTaskUpdate:       "updating a task",
	bullpen.ToolTaskHandoff:      "handing a task off",
	bullpen.ToolTaskSubmit:       "submitting a task",
}

// Doing returns what a tool call with these arguments is doing:
// "running `make test` in its sandbox", "reading the wiki".
func Doing(tool string, args json.RawMessage) string {
	if tool == bullpen.ToolSandboxExec {
		var a struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(args, &a) == nil && a.Command != "" {
			return "running " + code(a.Command) + " in its sandbox"
		}
		return "running a command in its sandbox"
	}
	if d, ok := doing[tool]; ok {
		return d
	}
	return "using " + tool
}

// toolStarted: "@engineer started running `make test` in its sandbox".
func toolStarted(ev bullpen.Event, _ bullpen.EventNames) (bullpen.EventLine, error) {
	t, err := bullpen.ToolOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	return bullpen.EventLine{Text: at(t.Handle) + " started " + Doing(t.Tool, t.Arguments), Link: turnLink(t.TurnID)}, nil
}

// toolFinished: "@engineer called sandbox_exec → ok in 15 ms". The
// command's own exit code is the sandbox.exec_finished line's.
func toolFinished(ev bullpen.Event, _ bullpen.EventNames) (bullpen.EventLine, error) {
	t, err := bullpen.ToolOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	state := t.State
	if state == "" {
		state = "done"
	}
	text := fmt.Sprintf("%s called %s → %s in %s", at(t.Handle), t.Tool, state, ms(t.DurationMS))
	return bullpen.EventLine{Text: text, Link: turnLink(t.TurnID)}, nil
}

// limitNames are the budgets as a person says them.
var limitNames = map[string]string{
	bullpen.LimitHops:        "hop budget",
	bullpen.LimitRate:        "rate limit",
	bullpen.LimitSteps:       "step limit",
	bullpen.LimitTurnTokens:  "turn token limit",
	bullpen.LimitDailyTokens: "daily token budget",
	bullpen.LimitTaskTokens:  "task token budget",
	bullpen.LimitDeadline:    "turn deadline",
}

// limitReached: "@lead stopped: hop budget (6) reached in thread 42".
func limitReached(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	l, err := bullpen.LimitOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
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
		return bullpen.EventLine{Text: text, Link: channelLink(n, ev.ChannelID, l.ThreadID)}, nil
	case l.TurnID != 0:
		return bullpen.EventLine{Text: join(text, where(n, ev.ChannelID)), Link: turnLink(l.TurnID)}, nil
	}
	return bullpen.EventLine{Text: join(text, where(n, ev.ChannelID)), Link: channelLink(n, ev.ChannelID, l.MessageID)}, nil
}
