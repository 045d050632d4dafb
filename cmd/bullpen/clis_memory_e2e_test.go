package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/runtime"
	"github.com/bullpen-hq/bullpen/view"
)

// deployWindow is a fact only the scripted model knows: it reaches the
// office only through the memory_write MCP call.
const deployWindow = "The deploy window is Tuesdays 14:00 UTC"

// TestClaudeCodeMemory: a Claude Code agent (the real CLI from npm,
// against the fake Anthropic server) writes a memory through MCP in one
// turn and finds it recalled in the work packet of a later one.
func TestClaudeCodeMemory(t *testing.T) {
	var mu sync.Mutex
	recalled := false
	fake := llmtest.NewFakeAnthropic(func(c llmtest.CapturedRequest) llmtest.Reply {
		if len(c.Tools) == 0 {
			return llmtest.Reply{Text: "Memory"} // a title or other side request
		}
		raw, last := string(c.Raw), lastToolResult(c)
		if !strings.Contains(raw, "when is the deploy window") {
			if last != "" {
				return llmtest.Reply{Text: "Saved."}
			}
			args, _ := json.Marshal(map[string]string{"text": deployWindow, "kind": bullpen.MemoryFact})
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "mcp__bullpen__memory_write", Arguments: args}}}
		}
		if last != "" {
			return llmtest.Reply{Text: "Done."}
		}
		mu.Lock()
		recalled = strings.Contains(raw, "## You remember") && strings.Contains(raw, deployWindow)
		mu.Unlock()
		args, _ := json.Marshal(map[string]string{"body": fmt.Sprintf("recalled: %v", recalled)})
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "mcp__bullpen__post_message", Arguments: args}}}
	})
	defer fake.Close()
	o := newCLIOffice(t, "anthropic", fake.URL, runtime.ClaudeCode{})
	eng := o.hire(bullpen.RuntimeClaudeCode, "anthropic", "claude-sonnet-4-5", func(r *bullpen.Role) {
		r.Tools = append(r.Tools, bullpen.ToolMemoryWrite, bullpen.ToolMemorySearch, bullpen.ToolMemoryForget)
	})

	since := o.m.Office.Hub().Last()
	o.say(0, "@engineer the release manager told you our deploy schedule; keep it for later")
	first, ev := o.waitTurnEnd(eng, since, 3*time.Minute)
	if ev.Type != bullpen.EventTurnFinished {
		t.Fatalf("first turn failed: %s", first.Error)
	}
	var list struct{ Items []bullpen.MemoryEntry }
	o.api.do("GET", fmt.Sprintf("/agents/%d/memory", eng.ID), nil, http.StatusOK, &list)
	if len(list.Items) != 1 || list.Items[0].Text != deployWindow || list.Items[0].SourceKind != bullpen.MemorySourceTurn ||
		list.Items[0].SourceID != first.TurnID || list.Items[0].AuthorID != eng.ID {
		t.Fatalf("memory after the first turn = %+v, want the fact from turn %d by the agent", list.Items, first.TurnID)
	}

	since = o.m.Office.Hub().Last()
	o.say(0, "@engineer when is the deploy window?")
	second, ev := o.waitTurnEnd(eng, since, 3*time.Minute)
	if ev.Type != bullpen.EventTurnFinished {
		t.Fatalf("second turn failed: %s", second.Error)
	}
	mu.Lock()
	defer mu.Unlock()
	if !recalled {
		t.Fatal("the CLI's prompt in the later turn did not carry the recalled memory")
	}
	var d view.TurnDetail
	o.api.do("GET", fmt.Sprintf("/turns/%d", second.TurnID), nil, http.StatusOK, &d)
	if len(d.Memory) != 1 || d.Memory[0].EntryID != list.Items[0].ID || d.Memory[0].Score <= 0 || !strings.Contains(d.WorkPacket, deployWindow) {
		t.Fatalf("inspector of the later turn: memory %+v, packet has the fact %v", d.Memory, strings.Contains(d.WorkPacket, deployWindow))
	}
}
