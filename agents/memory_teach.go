package agents

import (
	"context"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// rememberPrefix starts a human's message that teaches the agents it
// reaches: "remember: the staging DB is on port 5433".
const rememberPrefix = "remember:"

// rememberText returns what a message teaches: its text after
// "remember:" (any case), or "" when it teaches nothing.
func rememberText(body string) string {
	b := strings.TrimSpace(body)
	if len(b) < len(rememberPrefix) || !strings.EqualFold(b[:len(rememberPrefix)], rememberPrefix) {
		return ""
	}
	return strings.TrimSpace(b[len(rememberPrefix):])
}

// teach stores a human's "remember:" message as an entry of every agent
// it wakes (the agents it mentions, its DM's agent, the agents of its
// thread), with the message as its source and, in a DM, the DM as its
// audience. A router that sees the message twice merges the repeat into
// the first entry. Failures are logged: routing goes on.
func (r *router) teach(ctx context.Context, in WakeInput, targets []WakeTarget) {
	text := rememberText(in.Message.Body)
	if r.mem == nil || text == "" || in.Author.Kind != bullpen.KindHuman {
		return
	}
	for _, t := range targets {
		_, _, err := r.mem.WriteWith(ctx, in.Author, t.AgentID, bullpen.MemoryInput{Text: text,
			SourceKind: bullpen.MemorySourceMessage, SourceID: in.Message.ID, ChannelID: in.Message.ChannelID}, nil)
		if err != nil && ctx.Err() == nil {
			r.log.Warn("agents: remember", "agent", t.AgentID, "message", in.Message.ID, "err", err)
		}
	}
}
