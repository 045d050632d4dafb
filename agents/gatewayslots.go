package agents

import (
	"context"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// The calls in flight of a CLI turn. The gateway serves the sandboxes of
// the process that runs their turns, so a turn's call slots live in its
// process; its token reservations live in the database (store), where
// every replica's calls for the agent count against the day's budget.
const (
	// callSlotWait is how long a call over the turn's cap of calls in
	// flight (budgets.max_parallel_calls) waits for a slot before it is
	// refused with 429 and Retry-After.
	callSlotWait = 5 * time.Second
	// reservationTTL is when a reservation no process settled is charged
	// in full by the sweep even though its turn still runs.
	reservationTTL = time.Hour
	// reservationGrace is how long after its turn ended a reservation may
	// still be settled by its call before the sweep charges it in full.
	reservationGrace = time.Minute
	// settleWait bounds how long a finishing turn waits for its calls in
	// flight to settle, so that their tokens are in its totals.
	settleWait = 5 * time.Second
)

// acquire takes one of the turn's n call slots, waiting up to wait for
// one; ERATELIMIT when none frees up.
func (g *gatewayTurns) acquire(ctx context.Context, turnID int64, n int, wait time.Duration) error {
	var slots chan struct{}
	g.with(turnID, func(t *gatewayTurn) {
		if t.slots == nil {
			t.slots = make(chan struct{}, n)
		}
		slots = t.slots
	})
	select {
	case slots <- struct{}{}:
		return nil
	default:
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case slots <- struct{}{}:
		return nil
	case <-timer.C:
		return bullpen.Errorf(bullpen.ERATELIMIT, "%d model calls of this turn are in flight already (budgets.max_parallel_calls is %d): retry when one has ended", cap(slots), cap(slots))
	case <-ctx.Done():
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "the call ended while it waited for a slot: %v", ctx.Err())
	}
}

// release frees one of the turn's call slots.
func (g *gatewayTurns) release(turnID int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t := g.turns[turnID]; t != nil && t.slots != nil {
		select {
		case <-t.slots:
		default:
		}
	}
}

// ifPresent runs f on the turn's entry if it has one (a call that settles
// after its turn finished adds nothing to the finished totals).
func (g *gatewayTurns) ifPresent(turnID int64, f func(*gatewayTurn)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t := g.turns[turnID]; t != nil {
		f(t)
	}
}

// awaitIdle waits, up to max, until no call of the turn is in flight.
func (g *gatewayTurns) awaitIdle(turnID int64, max time.Duration) {
	deadline := time.Now().Add(max)
	for {
		busy := 0
		g.ifPresent(turnID, func(t *gatewayTurn) { busy = len(t.slots) })
		if busy == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
