package main

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// model is the scripted model every agent talks to: a real
// OpenAI-compatible server on loopback. Its first answer in a turn is a
// tool call running `echo hi` in the agent's sandbox; once it has seen the
// tool's result it answers with text, which ends the turn.
type model struct {
	fake  *llmtest.FakeOpenAI
	calls atomic.Int64
}

// newModel starts the fake; each answer waits delay before its first byte
// (0: at once), as a real model's time to first token would.
func newModel(delay time.Duration) *model {
	m := &model{}
	m.fake = llmtest.NewFakeOpenAI(func(req llmtest.CapturedRequest) llmtest.Reply {
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
			return llmtest.Reply{Text: "done", Delay: delay}
		}
		return llmtest.Reply{Delay: delay, ToolCalls: []llm.ToolCall{{Name: "sandbox_exec",
			Arguments: json.RawMessage(`{"command":"echo hi"}`)}}}
	})
	// Count every HTTP request that reaches the server, not only the ones
	// the handler understood: any request is a model call to the office.
	// Set before the server's address is handed out, so before any request.
	h := m.fake.Config.Handler
	m.fake.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.calls.Add(1)
		h.ServeHTTP(w, r)
	})
	return m
}

// Calls is how many model requests the fake has answered.
func (m *model) Calls() int64 { return m.calls.Load() }

func (m *model) Close() { m.fake.Close() }
