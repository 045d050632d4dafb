package agents

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/live"
	"github.com/bullpen-hq/bullpen/store"
)

// routerStore is what the router reads and writes, as the system (see
// the package doc); *store.DB provides it.
type routerStore interface {
	Cursor(ctx context.Context, name string) (int64, error)
	Transact(ctx context.Context, fn func(routerTx) error) error
	Channel(ctx context.Context, id int64) (bullpen.Channel, error)
	MembersByID(ctx context.Context, ids []int64) (map[int64]bullpen.Member, error)
	MembersByHandle(ctx context.Context, handles []string) (map[int64]bullpen.Member, error)
	AgentStates(ctx context.Context) (map[int64]string, error)
	ThreadAuthors(ctx context.Context, rootID int64) ([]int64, error)
	ChainTail(ctx context.Context, channelID, threadID, upto int64, limit int) ([]store.ChainMessage, error)
	TryLock(ctx context.Context, key int64) (*store.SessionLock, error)
	PendingAgents(ctx context.Context) ([]int64, error)
}

// routerTx is what the router writes in one transaction: wakes, their
// events and its cursor; *store.Tx provides it.
type routerTx interface {
	eventWriter
	CreateWakes(ws []bullpen.Wake) ([]bullpen.Wake, error)
	SetCursor(name string, seq int64) error
}

// routerOffice is the office's event feed and its poster of notices;
// *office.Office provides it.
type routerOffice interface {
	noticePoster
	Hub() *live.Hub
	Subscribe(since int64) *live.Feed
}

// waker wakes an agent's worker; *Service provides it.
type waker interface{ poke(agentID int64) }

// router turns posted messages into wakes: it follows the event feed
// (holding the router lock, so one process routes), applies the wake
// rules and the hop budget, queues the wakes with their events in one
// transaction, stores what a human teaches, and pokes the woken agents'
// workers. With a shared database it also pokes workers for wakes other
// processes queued.
type router struct {
	notifier
	db        routerStore
	off       routerOffice
	log       *slog.Logger
	mem       Memory // nil: "remember:" teaches nothing
	hopBudget int
	shared    bool // several processes run agents on this database
	wake      waker
	routed    atomic.Int64 // the last event sequence handled
}

func (r *router) poke(agentID int64) { r.wake.poke(agentID) }

// noticePoster posts a system message as a member; *office.Office
// provides it.
type noticePoster interface {
	Post(ctx context.Context, actor bullpen.Member, in bullpen.PostInput) (bullpen.Message, error)
}

// notifier posts notices.
type notifier struct {
	poster noticePoster
	log    *slog.Logger
}

// notice posts a visible system message as the agent concerned: a limit,
// a failure, a missing provider. It never wakes anyone.
func (n notifier) notice(ctx context.Context, agent bullpen.Member, channelID, threadID int64, text string) {
	_, err := n.poster.Post(ctx, agent, bullpen.PostInput{ChannelID: channelID, ThreadID: threadID,
		Body: "⚠️ " + text, Source: bullpen.SourceSystem})
	if err != nil && ctx.Err() == nil {
		n.log.Error("agents: post notice", "agent", agent.Handle, "err", err)
	}
}
