package agents

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/store"
)

// syncBuffer is a bytes.Buffer a logger may write from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// brokenProvider fails every call with an internal error.
type brokenProvider struct{}

func (brokenProvider) Name() string { return "broken" }
func (brokenProvider) Complete(context.Context, llm.Request, func(string)) (llm.Response, error) {
	return llm.Response{}, errors.New("model endpoint fell over")
}

// TestTurnLogNamesTurnAndAgent checks that a line logged deep in a turn
// carries the turn's id, agent handle and anchor wake without the call
// site naming them.
func TestTurnLogNamesTurnAndAgent(t *testing.T) {
	var buf syncBuffer
	h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": brokenProvider{}}, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	})
	h.start()
	pm := h.hire("starter/pm")
	h.post(h.admin, h.general.ID, 0, "@pm hi")
	h.waitIdle()
	var line string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, `msg="agents: turn failed"`) {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no turn-failed line in the log:\n%s", buf.String())
	}
	turns, err := h.db.Turns(context.Background(), pm.ID, 10)
	if err != nil || len(turns) != 1 {
		t.Fatalf("Turns = %v, %v; want one", turns, err)
	}
	for _, want := range []string{fmt.Sprintf("turn=%d ", turns[0].ID), "agent=" + pm.Handle + " ", "anchor_wake=", "model endpoint fell over"} {
		if !strings.Contains(line, want) {
			t.Errorf("log line %q lacks %q", line, want)
		}
	}
}
