package anthropic_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/anthropic"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// The Anthropic provider shares the timeouts: a server that never sends
// the answer's first byte, and one whose stream stalls, fail fast and say
// which timeout fired.
func TestTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply llmtest.Reply
		to    llm.Timeouts
		phase string
	}{
		{"first byte", llmtest.Reply{Delay: time.Minute, Text: "late"},
			llm.Timeouts{FirstByte: 300 * time.Millisecond, Idle: 5 * time.Second}, llm.PhaseFirstByte},
		{"idle", llmtest.Reply{Text: "one two three four five", ChunkSize: 4, ChunkDelay: time.Minute},
			llm.Timeouts{FirstByte: 5 * time.Second, Idle: 300 * time.Millisecond}, llm.PhaseIdle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply { return tc.reply })
			defer f.Close()
			p := newProvider(t, f, nil, func(c *anthropic.Config) { c.Timeouts, c.MaxRetries = tc.to, -1 })
			start := time.Now()
			_, err := p.Complete(context.Background(), userReq("hi"), nil)
			var te *llm.TimeoutError
			if !errors.As(err, &te) || te.Phase != tc.phase || bullpen.ErrorCode(err) != bullpen.EUNAVAILABLE ||
				!strings.Contains(bullpen.ErrorMessage(err), "timeout") {
				t.Fatalf("Complete() error = %v, want EUNAVAILABLE from a %s timeout", err, tc.phase)
			}
			if took := time.Since(start); took > 4*time.Second {
				t.Errorf("Complete() took %s with a 300ms %s timeout", took, tc.phase)
			}
		})
	}
}
