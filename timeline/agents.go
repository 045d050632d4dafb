package timeline

import (
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

func init() {
	register(bullpen.EventAgentHired, agentHired)
	register(bullpen.EventAgentUpdated, agentUpdated)
	register(bullpen.EventAgentFired, agentFired)
	register(bullpen.EventWakeQueued, wakeQueued)
	register(bullpen.EventTurnStarted, turnStarted)
	register(bullpen.EventTurnFinished, turnFinished)
	register(bullpen.EventTurnFailed, turnFailed)
	register(bullpen.EventTurnAbandoned, turnAbandoned)
	register(bullpen.EventToolStarted, toolStarted)
	register(bullpen.EventToolFinished, toolFinished)
	register(bullpen.EventLimitReached, limitReached)
}

func agentHired(ev bullpen.Event, _ bullpen.EventNames) (bullpen.EventLine, error) {
	a, err := bullpen.AgentOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	return bullpen.EventLine{Text: fmt.Sprintf("%s was hired as %s (role %s)", at(a.Handle), a.DisplayName, a.Role)}, nil
}

func agentUpdated(ev bullpen.Event, _ bullpen.EventNames) (bullpen.EventLine, error) {
	a, err := bullpen.AgentOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	return bullpen.EventLine{Text: at(a.Handle) + "'s role was updated"}, nil
}

func agentFired(ev bullpen.Event, _ bullpen.EventNames) (bullpen.EventLine, error) {
	a, err := bullpen.AgentFiredOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	return bullpen.EventLine{Text: at(a.Handle) + " was let go"}, nil
}

// why says what woke an agent, as the end of a sentence.
var why = map[string]string{
	bullpen.ReasonMention:  "mentioned",
	bullpen.ReasonAll:      "@all",
	bullpen.ReasonDM:       "a direct message",
	bullpen.ReasonThread:   "a reply in its thread",
	bullpen.ReasonApproval: "an approval answered",
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
	w, err := bullpen.WakeQueuedOf(ev)
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
	t, err := bullpen.TurnOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	text := fmt.Sprintf("%s started a turn (%s)", at(t.Handle), join(reasons(t.Reasons), where(n, ev.ChannelID)))
	return bullpen.EventLine{Text: text, Link: turnLink(t.TurnID)}, nil
}

// turnFinished: "@engineer finished a turn in 1.2 s (3 steps, 1840 tokens)".
func turnFinished(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	t, err := bullpen.TurnOf(ev)
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
	t, err := bullpen.TurnOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	return bullpen.EventLine{Text: at(handleOf(t, n)) + "'s turn failed: " + clip(t.Error, 120), Link: turnLink(t.TurnID)}, nil
}

func turnAbandoned(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	t, err := bullpen.TurnOf(ev)
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
func handleOf(t bullpen.TurnEvent, n bullpen.EventNames) string {
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
