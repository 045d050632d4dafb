package agents

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// workerStore is what the workers read and write of the agents' own
// tables; *store.DB provides it.
type workerStore interface {
	Transact(ctx context.Context, fn func(*store.Tx) error) ([]bullpen.Event, error)
	Channel(ctx context.Context, id int64) (bullpen.Channel, error)
	Member(ctx context.Context, id int64) (bullpen.Member, error)
}

// turnRunner runs one claimed turn; *Service provides it.
type turnRunner interface {
	runTurn(ctx context.Context, log *slog.Logger, turn bullpen.Turn, wakes []bullpen.Wake) *turnEnv
}

// reservationSweeper releases the gateway reservations of turns that
// ended without settling them; *Service provides it.
type reservationSweeper interface {
	SweepReservations(ctx context.Context) (int, error)
}

// workers runs one worker per agent with pending wakes, under the
// office-wide concurrency limit (sem): each claims its agent's wakes under
// a lease, runs the turn, renews the lease meanwhile and re-drives a turn
// a database outage cut off. The sweeper reclaims the turns of dead
// processes.
type workers struct {
	notifier
	db           workerStore
	life         *lifecycle
	sem          chan struct{} // the office-wide turn slots
	owner        string        // this process's turn-lease owner ID
	lease        time.Duration
	sweep        time.Duration
	maxCoalesce  int
	now          func() time.Time
	log          *slog.Logger
	turns        turnRunner
	reservations reservationSweeper
	placer       *placer // nil: any replica runs any agent's turns

	mu    sync.Mutex
	pokes map[int64]chan struct{} // agent → its worker's poke
}

// poke tells an agent's worker that wakes may be pending, starting the
// worker on first use.
func (w *workers) poke(agentID int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch, ok := w.pokes[agentID]
	if !ok {
		ch = make(chan struct{}, 1)
		if !w.life.spawn(func(ctx context.Context) { w.runWorker(ctx, agentID, ch) }) {
			return
		}
		w.pokes[agentID] = ch
	}
	select {
	case ch <- struct{}{}:
	default: // already poked
	}
}

// runWorker is one agent's worker. It sleeps on its poke channel; when
// poked it takes a concurrency slot, claims the oldest pending wakes of
// one channel as a turn, runs it, and repeats until nothing is pending.
func (w *workers) runWorker(ctx context.Context, agentID int64, poke <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-poke:
		}
		for ctx.Err() == nil {
			select {
			case w.sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			ran, cut := w.claimAndRun(ctx, agentID)
			<-w.sem
			if cut != nil {
				// Held by this worker, the agent claims nothing newer
				// until the cut-off turn's wakes are pending again.
				w.redrive(ctx, cut)
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
func (w *workers) claimAndRun(ctx context.Context, agentID int64) (bool, *turnEnv) {
	var (
		turn   bullpen.Turn
		wakes  []bullpen.Wake
		placed store.Placed
		err    error
	)
	for n := 0; ; n++ {
		turn, wakes, placed, err = w.claim(ctx, agentID)
		if !store.IsOutage(err) || !sleepCtx(ctx, outageBackoff(n)) {
			break
		}
	}
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return false, nil
	}
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("agents: claim wakes", "agent", agentID, "err", err)
			time.Sleep(time.Second) // the database is unwell; do not spin
		}
		return false, nil
	}
	if placed.From != "" {
		w.placer.moved(ctx, w.notifier, turn, placed.From)
	}
	log := w.turnLogger(turn, wakes)
	leaseCtx, stopLease := context.WithCancel(ctx)
	go w.renewLease(leaseCtx, log, turn.ID)
	e := w.turns.runTurn(ctx, log, turn, wakes)
	stopLease()
	if e.lost != nil && ctx.Err() == nil {
		return true, e
	}
	return true, nil
}

// claim claims the agent's oldest pending wakes as a turn, on this
// replica only when placement is on and the agent is (or may be) placed
// here.
func (w *workers) claim(ctx context.Context, agentID int64) (turn bullpen.Turn, wakes []bullpen.Wake, placed store.Placed, err error) {
	_, err = w.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if w.placer == nil {
			turn, wakes, err = tx.ClaimWakes(agentID, w.owner, w.now().Add(w.lease), w.maxCoalesce)
		} else {
			turn, wakes, placed, err = tx.ClaimPlacedWakes(w.placer.place, agentID, w.owner, w.now().Add(w.lease), w.maxCoalesce)
		}
		return err
	})
	return turn, wakes, placed, err
}

// turnLogger is the one logger of a claimed turn: every line it writes
// names the turn, its agent, channel and anchor wake (the journal's key),
// so call sites do not repeat them.
func (w *workers) turnLogger(turn bullpen.Turn, wakes []bullpen.Wake) *slog.Logger {
	return w.log.With("turn", turn.ID, "agent_id", turn.AgentID, "channel", turn.ChannelID,
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
func (w *workers) renewLease(ctx context.Context, log *slog.Logger, turnID int64) {
	t := time.NewTicker(w.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, err := w.db.Transact(ctx, func(tx *store.Tx) error {
				_, err := tx.RenewLease(turnID, w.owner, w.now().Add(w.lease))
				return err
			})
			if err != nil && ctx.Err() == nil {
				log.Error("agents: renew lease", "err", err)
			}
		}
	}
}

// reclaim abandons turns whose process died and re-queues their wakes.
func (w *workers) reclaim(ctx context.Context, otherOwners bool) error {
	var turns []bullpen.Turn
	_, err := w.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if turns, err = tx.ReclaimTurns(w.owner, otherOwners); err != nil {
			return err
		}
		for _, t := range turns {
			c, err := w.db.Channel(ctx, t.ChannelID)
			if err != nil {
				return err
			}
			if _, err := tx.Emit(bullpen.EventTurnAbandoned, t.ChannelID, audience(c), bullpen.TurnEvent{TurnID: t.ID, AgentID: t.AgentID,
				Error: "the worker stopped mid-turn; its wakes are queued again"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("agents: reclaim turns: %w", err)
	}
	for _, t := range turns {
		w.log.Info("re-queued the wakes of an abandoned turn", "turn", t.ID, "agent", t.AgentID)
		w.poke(t.AgentID)
	}
	return nil
}

func (w *workers) sweepLoop(ctx context.Context) {
	t := time.NewTicker(w.sweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := w.reclaim(ctx, false); err != nil && ctx.Err() == nil {
				w.log.Error("agents: lease sweep", "err", err)
			}
			if _, err := w.reservations.SweepReservations(ctx); err != nil && ctx.Err() == nil {
				w.log.Error("agents: reservation sweep", "err", err)
			}
		}
	}
}
