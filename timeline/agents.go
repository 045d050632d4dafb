package timeline

import (
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
)

func init() {
	register(agents.EventAgentHired, agentHired)
	register(agents.EventAgentUpdated, agentUpdated)
	register(agents.EventAgentFired, agentFired)
	register(agents.EventWakeQueued, wakeQueued)
	register(agents.EventTurnStarted, turnStarted)
	register(agents.EventTurnFinished, turnFinished)
	register(agents.EventTurnFailed, turnFailed)
	register(agents.EventTurnAbandoned, turnAbandoned)
	register(agents.EventToolStarted, toolStarted)
	register(agents.EventToolFinished, toolFinished)
	register(agents.EventLimitReached, limitReached)
}

func agentHired(ev bullpen.Event, _ bullpen.EventNames) (bullpen.EventLine, error) {
	a, err := agents.AgentOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	return bullpen.EventLine{Text: fmt.Sprintf("%s was hired as %s (role %s)", at(a.Handle), a.DisplayName, a.Role)}, nil
}

func agentUpdated(ev bullpen.Event, _ bullpen.EventNames) (bullpen.EventLine, error) {
	a, err := agents.AgentOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	return bullpen.EventLine{Text: at(a.Handle) + "'s role was updated"}, nil
}

func agentFired(ev bullpen.Event, _ bullpen.EventNames) (bullpen.EventLine, error) {
	a, err := agents.AgentFiredOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	return bullpen.EventLine{Text: at(a.Handle) + " was let go"}, nil
}

// why says what woke an agent, as the end of a sentence.
var why = map[string]string{
	agents.ReasonMention:  "mentioned",
	agents.ReasonAll:      "@all",
	agents.ReasonDM:       "a direct message",
	agents.ReasonThread:   "a reply in its thread",
	agents.ReasonApproval: "an approval answered",
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

func wakeQueued(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	w, err := agents.WakeQueuedOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	text := fmt.Sprintf("%s was woken (%s)", at(w.Handle), join(reasons([]string{w.Reason}), where(n, ev.ChannelID)))
	link := ""
	if w.MessageID != 0 {
		link = channelLink(n, ev.ChannelID, w.MessageID)
	}
	return bullpen.EventLine{Text: text, Link: link}, nil
}

// turnStarted: "@engineer started a turn (mentioned in #general)".
func turnStarted(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	t, err := agents.TurnOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	text := fmt.Sprintf("%s started a turn (%s)", at(t.Handle), join(reasons(t.Reasons), where(n, ev.ChannelID)))
	return bullpen.EventLine{Text: text, Link: turnLink(t.TurnID)}, nil
}

// turnFinished: "@engineer finished a turn in 1.2 s (3 steps, 1840 tokens)".
func turnFinished(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	t, err := agents.TurnOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	parts := []string{plural(t.Steps, "step")}
	if t.Usage != nil {
		parts = append(parts, plural(t.Usage.InputTokens+t.Usage.OutputTokens, "token"))
	}
	text := fmt.Sprintf("%s finished a turn in %s (%s)", at(handleOf(t, n)), ms(t.DurationMS), strings.Join(parts, ", "))
	return bullpen.EventLine{Text: text, Link: turnLink(t.TurnID)}, nil
}

func turnFailed(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	t, err := agents.TurnOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	return bullpen.EventLine{Text: at(handleOf(t, n)) + "'s turn failed: " + clip(t.Error, 120), Link: turnLink(t.TurnID)}, nil
}

func turnAbandoned(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	t, err := agents.TurnOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	text := at(handleOf(t, n)) + "'s turn was abandoned"
	if t.Error != "" {
		text += ": " + clip(t.Error, 120)
	}
	return bullpen.EventLine{Text: text, Link: turnLink(t.TurnID)}, nil
}

// handleOf is the turn's agent: finished turns may carry no handle.
func handleOf(t agents.TurnEvent, n bullpen.EventNames) string {
	if t.Handle != "" {
		return t.Handle
	}
	return n.MemberHandle(t.AgentID)
}

func plural(k int, word string) string {
	if k == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", k, word)
}
