package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/runtime"
)

// benchTurns is the fixed lead→engineer scenario's length.
const benchTurns = 10

// stepScript: each engineer turn runs one command, posts its output with
// post_message and ends: three model calls.
func stepScript() llmtest.Handler {
	return func(c llmtest.CapturedRequest) llmtest.Reply {
		// The turn's own calls so far: tool results after its last user
		// message (a resumed or long thread carries older ones before).
		results := 0
		for i := len(c.Messages) - 1; i >= 0 && c.Messages[i].Role != "user"; i-- {
			if c.Messages[i].Role == "tool" {
				results++
			}
		}
		switch results {
		case 0:
			args, _ := json.Marshal(map[string]string{"command": "echo step done", "description": "the step"})
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "Bash", Arguments: args}}}
		case 1:
			args, _ := json.Marshal(map[string]string{"body": "Step result: " + strings.TrimSpace(lastToolResult(c))})
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "mcp__bullpen__post_message", Arguments: args}}}
		}
		return llmtest.Reply{Text: "Done."}
	}
}

// BenchmarkClaudeCodeTurns runs the fixed lead→engineer scenario: the
// lead (the office's admin) hands @engineer (runtime claude-code, the real
// CLI in its sandbox) ten steps in one thread. It prints, per turn, the
// prompt tokens the gateway counted (input, cached and cache-write
// tokens of every model call of the turn) and the time from the turn's
// start to the CLI's first model request, and fails beyond the targets:
// at most 30,000 prompt tokens per turn and turn 10 within 1.1 × turn 2.
func BenchmarkClaudeCodeTurns(b *testing.B) {
	fake := llmtest.NewFakeAnthropic(stepScript())
	defer fake.Close()
	o := newCLIOffice(b, "anthropic", fake.URL, runtime.ClaudeCode{})
	eng := o.hire(bullpen.RuntimeClaudeCode, "anthropic", "claude-sonnet-4-5", nil)
	for i := 0; i < b.N; i++ {
		tokens, firstReq := runScenario(b, o, eng, fake)
		report(b, tokens, firstReq)
	}
}

func runScenario(b *testing.B, o *cliOffice, eng bullpen.Member, fake *llmtest.FakeAnthropic) ([]int, []time.Duration) {
	var tokens []int
	var firstReq []time.Duration
	var thread int64
	for k := 1; k <= benchTurns; k++ {
		since := o.m.Office.Hub().Last()
		before := len(fake.Requests())
		msg := o.say(thread, fmt.Sprintf("@engineer step %d: run the step command and post its result", k))
		if thread == 0 {
			thread = msg.ID
		}
		turn, ev := o.waitTurnEnd(eng, since, 3*time.Minute)
		if ev.Type != bullpen.EventTurnFinished || turn.Usage == nil {
			b.Fatalf("turn %d: %s", k, turn.Error)
		}
		tokens = append(tokens, turn.Usage.InputTokens)
		reqs := fake.Requests()[before:]
		if len(reqs) == 0 {
			b.Fatalf("turn %d made no model request", k)
		}
		firstReq = append(firstReq, reqs[0].Time.Sub(turnStart(b, o, since, turn.TurnID)))
	}
	return tokens, firstReq
}

// turnStart is when the turn's agent.turn_started event was stored.
func turnStart(b *testing.B, o *cliOffice, since, turnID int64) time.Time {
	for _, ev := range o.events(since) {
		if te, err := bullpen.TurnOf(ev); err == nil && ev.Type == bullpen.EventTurnStarted && te.TurnID == turnID {
			return ev.At
		}
	}
	b.Fatalf("no start event for turn %d", turnID)
	return time.Time{}
}

func report(b *testing.B, tokens []int, firstReq []time.Duration) {
	sorted := append([]time.Duration(nil), firstReq...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	b.Logf("prompt tokens per turn (claude-code, at the gateway): %v", tokens)
	b.Logf("turn start → first model request: median %s, min %s, max %s", sorted[len(sorted)/2].Round(time.Millisecond),
		sorted[0].Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond))
	fmt.Printf("claude-code prompt tokens per turn: %v (turn 10 / turn 2 = %.3f); first model request after %s (median)\n",
		tokens, float64(tokens[9])/float64(tokens[1]), sorted[len(sorted)/2].Round(time.Millisecond))
	b.ReportMetric(float64(tokens[9]), "prompt-tokens-turn10")
	b.ReportMetric(float64(sorted[len(sorted)/2].Milliseconds()), "ms-to-first-request")
	for i, n := range tokens {
		if n > 30000 {
			b.Errorf("turn %d used %d prompt tokens (target ≤ 30,000)", i+1, n)
		}
	}
	if float64(tokens[9]) > 1.1*float64(tokens[1]) {
		b.Errorf("turn 10 used %d prompt tokens, more than 1.1 × turn 2's %d", tokens[9], tokens[1])
	}
}
