package agents

import (
	"context"
	"log/slog"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Defaults of the turn record's retention.
const (
	DefaultTurnRetention = 30 * 24 * time.Hour
	defaultPruneEvery    = time.Hour
	// bigToolResult is the size above which a tool call's result is
	// removed with its turn's model calls; smaller ones cost less than
	// the note that would replace them.
	bigToolResult = 1024
)

// ModelCallRecorder stores model calls; *store.DB is one.
type ModelCallRecorder interface {
	RecordModelCall(ctx context.Context, c bullpen.ModelCall) error
}

// turnRecorder records the model calls of one turn: every provider call
// made with its context (llm.WithRecorder) lands in that turn, numbered
// in order by the store.
type turnRecorder struct {
	rec     ModelCallRecorder
	turnID  int64
	agentID int64
	log     *slog.Logger
}

// RecordModelCall implements llm.Recorder.
func (r turnRecorder) RecordModelCall(ctx context.Context, c bullpen.ModelCall) error {
	c.TurnID, c.AgentID = r.turnID, r.agentID
	err := r.rec.RecordModelCall(ctx, c)
	if err != nil && ctx.Err() == nil {
		r.log.Error("agents: record model call", "err", err)
	}
	return err
}

// pruner removes turn records past their retention.
type pruner struct {
	db interface {
		PruneTurnRecords(ctx context.Context, cutoff time.Time, bigResult int) (store.PruneResult, error)
	}
	retention time.Duration
	every     time.Duration
	now       func() time.Time
	log       *slog.Logger
}

// pruneLoop applies the retention now and then every PruneEvery, until
// ctx ends.
func (p pruner) pruneLoop(ctx context.Context) {
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		if _, err := p.prune(ctx); err != nil && ctx.Err() == nil {
			p.log.Error("agents: prune turn records", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// prune deletes the model calls, and large tool results, of turns that
// started more than TurnRetention ago (by the service's clock).
func (p pruner) prune(ctx context.Context) (store.PruneResult, error) {
	res, err := p.db.PruneTurnRecords(ctx, p.now().Add(-p.retention), bigToolResult)
	if err == nil && res != (store.PruneResult{}) {
		p.log.Info("pruned turn records past retention", "model_calls", res.ModelCalls, "tool_results", res.ToolResults, "responses", res.Responses,
			"retention", p.retention.String())
	}
	return res, err
}
