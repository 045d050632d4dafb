package agents

import (
	"context"
	"log/slog"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// runWorker is one agent's worker. It sleeps on its poke channel; when
// poked it takes a concurrency slot, claims the oldest pending wakes of
// one channel as a turn, runs it, and repeats until nothing is pending.
func (s *Service) runWorker(ctx context.Context, agentID int64, poke <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-poke:
		}
		for ctx.Err() == nil {
			select {
			case s.sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			ran, cut := s.claimAndRun(ctx, agentID)
			<-s.sem
			if cut != nil {
				// Held by this worker, the agent claims nothing newer
				// until the cut-off turn's wakes are pending again.
				s.redrive(ctx, cut)
				continue
			}
			if !ran {
				break
			}
		}
	}
}

// claimAndRun runs one turn if wakes are pending; it reports whether it
// claimed any, and returns the turn when a database outage cut it off.
// A claim the database refuses is retried with backoff until it answers
// (outage.go): the wakes pending then are claimed without another poke.
func (s *Service) claimAndRun(ctx context.Context, agentID int64) (bool, *turnEnv) {
	var (
		turn  bullpen.Turn
		wakes []bullpen.Wake
		err   error
	)
	for n := 0; ; n++ {
		_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
			var err error
			turn, wakes, err = tx.ClaimWakes(agentID, s.owner, s.cfg.Now().Add(s.cfg.Lease), s.cfg.MaxCoalesce)
			return err
		})
		if !store.IsOutage(err) || !sleepCtx(ctx, outageBackoff(n)) {
			break
		}
	}
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return false, nil
	}
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("agents: claim wakes", "agent", agentID, "err", err)
			time.Sleep(time.Second) // the database is unwell; do not spin
		}
		return false, nil
	}
	log := s.turnLogger(turn, wakes)
	leaseCtx, stopLease := context.WithCancel(ctx)
	go s.renewLease(leaseCtx, log, turn.ID)
	e := s.runTurn(ctx, log, turn, wakes)
	stopLease()
	if e.lost != nil && ctx.Err() == nil {
		return true, e
	}
	return true, nil
}

// turnLogger is the one logger of a claimed turn: every line it writes
// names the turn, its agent, channel and anchor wake (the journal's key),
// so call sites do not repeat them.
func (s *Service) turnLogger(turn bullpen.Turn, wakes []bullpen.Wake) *slog.Logger {
	return s.log.With("turn", turn.ID, "agent_id", turn.AgentID, "channel", turn.ChannelID,
		"anchor_wake", anchorOf(wakes))
}

// anchorOf is the oldest of a turn's wakes: its journal is keyed by it.
func anchorOf(wakes []bullpen.Wake) int64 {
	if len(wakes) == 0 {
		return 0
	}
	anchor := wakes[0].ID
	for _, w := range wakes {
		anchor = min(anchor, w.ID)
	}
	return anchor
}

// renewLease keeps a running turn's lease fresh until ctx ends.
func (s *Service) renewLease(ctx context.Context, log *slog.Logger, turnID int64) {
	t := time.NewTicker(s.cfg.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
				_, err := tx.RenewLease(turnID, s.owner, s.cfg.Now().Add(s.cfg.Lease))
				return err
			})
			if err != nil && ctx.Err() == nil {
				log.Error("agents: renew lease", "err", err)
			}
		}
	}
}
