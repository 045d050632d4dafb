package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// toolShape is what must match between a built-in call's events and an
// MCP call's: the kind, the tool, the state, and which payload fields are
// set.
type toolShape struct {
	Type, Tool, State string
	Fields            string
}

func shapes(t *testing.T, evs []bullpen.Event, turnID, agentID int64) []toolShape {
	t.Helper()
	var out []toolShape
	started := map[int64]bool{}
	for _, ev := range evs {
		te, err := bullpen.ToolOf(ev)
		if err != nil || te.TurnID != turnID {
			continue
		}
		if te.AgentID != agentID || te.Handle == "" || te.CallID == 0 {
			t.Errorf("%s of turn %d: %+v, want agent %d, a handle and a call id", ev.Type, turnID, te, agentID)
		}
		if ev.Type == bullpen.EventToolStarted {
			started[te.CallID] = true
		} else if !started[te.CallID] {
			t.Errorf("%s for call %d that never started", ev.Type, te.CallID)
		}
		var fields map[string]json.RawMessage
		json.Unmarshal(ev.Payload, &fields)
		delete(fields, "duration_ms") // omitted when a call took under 1 ms
		out = append(out, toolShape{Type: ev.Type, Tool: te.Tool, State: te.State,
			Fields: strings.Join(slices.Sorted(maps.Keys(fields)), ",")})
	}
	return out
}

// Every MCP call produces the same tool events, and the same tool-call
// records of its turn, as the built-in loop's call of the same tool.
func TestMCPEventsMatchBuiltin(t *testing.T) {
	eachDialect(t, func(t *testing.T, ts *mcpServer) {
		twin, _ := ts.hire(t, "twin", []string{bullpen.ToolListMembers, bullpen.ToolPostMessage})
		since := ts.lastSeq(t)
		var m bullpen.Message
		ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]any{"body": "@twin use tools"}, &m)
		var builtin bullpen.Turn
		waitUntil(t, func() bool {
			var turns struct{ Items []bullpen.Turn }
			ts.do("GET", "/api/v1/agents/"+itoa(twin.ID)+"/turns", ts.Token, nil, &turns)
			if len(turns.Items) == 1 && turns.Items[0].State == bullpen.TurnDone {
				builtin = turns.Items[0]
			}
			return builtin.ID != 0
		})
		want := shapes(t, ts.toolEvents(t, since, twin.ID), builtin.ID, twin.ID)
		if len(want) != 4 {
			t.Fatalf("built-in turn made %d tool events, want 4: %+v", len(want), want)
		}

		turn, _ := ts.runningTurn(t, twin, "hold")
		defer ts.release()
		tok, err := ts.Off.MintTurnToken(context.Background(), twin.ID, turn.ID, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		s := ts.mustConnect(t, tok)
		since = ts.lastSeq(t)
		mcpCall(t, s, bullpen.ToolListMembers, map[string]any{})
		mcpCall(t, s, bullpen.ToolPostMessage, map[string]any{"body": "mcp reply"})
		got := shapes(t, ts.toolEvents(t, since, twin.ID), turn.ID, twin.ID)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("MCP tool events:\n%+v\nbuilt-in:\n%+v", got, want)
		}
		// Both turns list their calls the same way.
		if a, b := callNames(t, ts, twin.ID, builtin.ID), callNames(t, ts, twin.ID, turn.ID); !slices.Equal(a, b) || len(a) != 2 {
			t.Errorf("tool calls of the MCP turn %v, of the built-in turn %v", b, a)
		}
	})
}

// callNames lists a turn's recorded tool calls as name/state.
func callNames(t *testing.T, ts *mcpServer, agentID, turnID int64) []string {
	t.Helper()
	turns, err := ts.DB.Turns(context.Background(), agentID, 10)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tu := range turns {
		for _, c := range tu.ToolCalls {
			if tu.ID == turnID {
				out = append(out, c.Name+"/"+c.State)
			}
		}
	}
	return out
}

// Approvals apply to MCP calls as to built-in ones: inside a turn the call
// becomes an approval request; outside any turn it is refused.
func TestMCPApprovals(t *testing.T) {
	eachDialect(t, func(t *testing.T, ts *mcpServer) {
		gated, agentTok := ts.hire(t, "gated", []string{bullpen.ToolPostMessage}, bullpen.ToolPostMessage)
		out, isErr := mcpCall(t, ts.mustConnect(t, agentTok), bullpen.ToolPostMessage, map[string]any{"body": "unapproved", "channel": "general"})
		if !isErr || !strings.Contains(out, "needs a human's approval") {
			t.Errorf("gated call outside a turn = %q (error %v), want refused", out, isErr)
		}
		turn, _ := ts.runningTurn(t, gated, "hold")
		defer ts.release()
		tok, err := ts.Off.MintTurnToken(context.Background(), gated.ID, turn.ID, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		out, isErr = mcpCall(t, ts.mustConnect(t, tok), bullpen.ToolPostMessage, map[string]any{"body": "needs a yes"})
		if isErr || !strings.Contains(out, "Approval #") {
			t.Errorf("gated call in a turn = %q (error %v), want an approval request", out, isErr)
		}
		var list struct{ Items []bullpen.Approval }
		ts.do("GET", "/api/v1/approvals", ts.Token, nil, &list)
		if len(list.Items) != 1 || list.Items[0].AgentID != gated.ID || list.Items[0].TurnID != turn.ID || list.Items[0].Tool != bullpen.ToolPostMessage {
			t.Errorf("approvals = %+v, want one for @gated's post_message in turn %d", list.Items, turn.ID)
		}
		var page struct{ Items []bullpen.Message }
		ts.do("GET", "/api/v1/channels/1/messages", ts.Token, nil, &page)
		for _, m := range page.Items {
			if m.Body == "needs a yes" || m.Body == "unapproved" {
				t.Errorf("a gated message was posted: %+v", m)
			}
		}
	})
}
