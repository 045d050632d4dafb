package agents

import (
	"context"
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
			ran := s.claimAndRun(ctx, agentID)
			<-s.sem
			if !ran {
				break
			}
		}
	}
}

// claimAndRun runs one turn if wakes are pending; it reports whether it
// claimed any.
func (s *Service) claimAndRun(ctx context.Context, agentID int64) bool {
	var (
		turn  bullpen.Turn
		wakes []bullpen.Wake
	)
	_, err := s.db.Write(ctx, func(tx *store.Tx) error {
		var err error
		turn, wakes, err = tx.ClaimWakes(agentID, s.owner, s.cfg.Now().Add(s.cfg.Lease), s.cfg.MaxCoalesce)
		return err
	})
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return false
	}
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("agents: claim wakes", "agent", agentID, "err", err)
			time.Sleep(time.Second) // the database is unwell; do not spin
		}
		return false
	}
	leaseCtx, stopLease := context.WithCancel(ctx)
	go s.renewLease(leaseCtx, turn.ID)
	s.runTurn(ctx, turn, wakes)
	stopLease()
	return true
}

// renewLease keeps a running turn's lease fresh until ctx ends.
func (s *Service) renewLease(ctx context.Context, turnID int64) {
	t := time.NewTicker(s.cfg.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, err := s.db.Write(ctx, func(tx *store.Tx) error {
				_, err := tx.RenewLease(turnID, s.owner, s.cfg.Now().Add(s.cfg.Lease))
				return err
			})
			if err != nil && ctx.Err() == nil {
				s.log.Error("agents: renew lease", "turn", turnID, "err", err)
			}
		}
	}
}
