package agents

import (
	"context"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// inspectStore is what the turn inspector reads; *store.DB provides it.
type inspectStore interface {
	Turn(ctx context.Context, id int64) (bullpen.Turn, error)
	Agent(ctx context.Context, memberID int64) (bullpen.Agent, error)
	Member(ctx context.Context, id int64) (bullpen.Member, error)
	Channel(ctx context.Context, id int64) (bullpen.Channel, error)
	Message(ctx context.Context, id int64) (bullpen.Message, error)
	Wakes(ctx context.Context, turnID int64) ([]bullpen.Wake, error)
	Steps(ctx context.Context, anchor int64) (map[string]store.Step, error)
	ToolCalls(ctx context.Context, turnID int64) ([]bullpen.ToolCall, error)
	ModelCalls(ctx context.Context, turnID int64) ([]bullpen.ModelCall, error)
	MemoryRecalls(ctx context.Context, turnID int64) ([]bullpen.MemoryRecall, error)
	UsageSince(ctx context.Context, agentID int64, t time.Time) (store.TurnUsage, error)
}

// inspector serves the turn inspector: everything recorded of one turn,
// read-only, as the actor may see it.
type inspector struct {
	db  inspectStore
	now func() time.Time
}
