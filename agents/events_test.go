package agents

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// TestEventDecoders round-trips each agent event payload through its
// typed decoder, checks that the agent is found by bullpen.AgentIDOf (the
// dashboard's per-agent stream relies on it), and that a decoder refuses
// an event of another type.
func TestEventDecoders(t *testing.T) {
	tests := []struct {
		typ     string
		payload any
		decode  func(bullpen.Event) (any, error)
	}{
		{bullpen.EventWakeQueued, bullpen.WakeQueued{WakeID: 1, AgentID: 5, Handle: "bot", Reason: "mention"},
			func(ev bullpen.Event) (any, error) { return bullpen.WakeQueuedOf(ev) }},
		{bullpen.EventTurnFinished, bullpen.TurnEvent{TurnID: 2, AgentID: 5, Usage: &bullpen.TokenUsage{InputTokens: 10}},
			func(ev bullpen.Event) (any, error) { return bullpen.TurnOf(ev) }},
		{bullpen.EventToolStarted, bullpen.ToolEvent{TurnID: 2, AgentID: 5, Tool: "wiki_read", Arguments: json.RawMessage(`{"slug":"home"}`)},
			func(ev bullpen.Event) (any, error) { return bullpen.ToolOf(ev) }},
		{bullpen.EventLimitReached, bullpen.LimitEvent{AgentID: 5, Limit: bullpen.LimitHops},
			func(ev bullpen.Event) (any, error) { return bullpen.LimitOf(ev) }},
		{bullpen.EventAgentDelta, bullpen.DeltaEvent{TurnID: 2, AgentID: 5, Text: "hel"},
			func(ev bullpen.Event) (any, error) { return bullpen.DeltaOf(ev) }},
		{bullpen.EventAgentStatus, bullpen.AgentStatusEvent{AgentID: 5, Status: bullpen.AgentStatus{State: bullpen.StatusWaiting, WaitedS: 3}},
			func(ev bullpen.Event) (any, error) { return bullpen.StatusOf(ev) }},
		{bullpen.EventAgentFired, bullpen.AgentFiredEvent{AgentID: 5, Handle: "bot"},
			func(ev bullpen.Event) (any, error) { return bullpen.AgentFiredOf(ev) }},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			raw, err := json.Marshal(tt.payload)
			if err != nil {
				t.Fatal(err)
			}
			ev := bullpen.Event{Seq: 3, Type: tt.typ, Payload: raw}
			got, err := tt.decode(ev)
			if err != nil || !reflect.DeepEqual(got, tt.payload) {
				t.Errorf("decode(%s) = %+v, %v; want %+v", raw, got, err, tt.payload)
			}
			if id, err := bullpen.AgentIDOf(ev); err != nil || id != 5 {
				t.Errorf("AgentIDOf(%s) = %d, %v; want 5", raw, id, err)
			}
			ev.Type = bullpen.EventMessagePosted
			if _, err := tt.decode(ev); !bullpen.IsCode(err, bullpen.EINVALID) {
				t.Errorf("decode(message.posted) err = %v, want EINVALID", err)
			}
		})
	}
}
