package agents

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// A database outage does not strand turns.
//
// A turn whose write fails because the database cannot be reached or
// written (store.IsOutage) tries the same write again with backoff
// (retryWrite), for up to Config.OutageWait: a short outage only pauses
// the turn, which goes on from the write it was at when the database
// answers, and says so once in the channel. A turn that cannot go on
// (a read it needs failed, or the outage outlasted OutageWait) is cut
// off: it records nothing more, and its worker, still holding the agent,
// re-drives it (redrive): it tries, with backoff, the write that puts the
// turn's wakes back to pending, and as soon as the database takes it the
// same worker claims them again. The new turn replays the journal, so no
// effect happens twice. As the worker holds the agent throughout, a newer
// wake of the same agent is never answered before the cut-off one; a
// claim that failed for an outage is retried the same way. The lease
// sweeper remains the net for a process that died.

// outageBackoff is the wait before retry n of a write the database
// refused: 100 ms doubling to 1 s, so a database that is back is seen
// within a second.
func outageBackoff(n int) time.Duration {
	return min(100*time.Millisecond<<min(n, 4), time.Second)
}

// cut marks the turn as cut off by a database outage when err is one,
// and reports whether it was.
func (e *turnEnv) cut(err error) bool {
	if !store.IsOutage(err) {
		return false
	}
	if e.lost == nil {
		e.lost = err
	}
	return true
}

// retryWrite runs write until it succeeds, fails for another reason
// than an outage, ctx ends, or the database has refused it for longer
// than Config.OutageWait, when the turn is cut off. A turn already cut
// off writes nothing more: its re-run does the write.
func (s *turnLoop) retryWrite(ctx context.Context, e *turnEnv, what string, write func() error) error {
	if e.lost != nil {
		return e.lost
	}
	start := time.Now()
	for n := 0; ; n++ {
		err := write()
		if !store.IsOutage(err) || ctx.Err() != nil {
			if n > 0 {
				e.heldUp += time.Since(start)
				e.log.Info("agents: the database answers again", "write", what, "waited", time.Since(start).Round(time.Millisecond))
			}
			return err
		}
		if n == 0 {
			e.log.Warn("agents: the database refused a write; retrying", "write", what, "err", err)
		}
		e.log.Debug("agents: write refused", "write", what, "attempt", n, "err", err)
		if time.Since(start) > s.cfg.OutageWait || !sleepCtx(ctx, outageBackoff(n)) {
			e.cut(err)
			return err
		}
	}
}

// heldUpNotice says once in the channel that a database outage held the
// turn up, before the turn's end is stored.
func (s *turnLoop) heldUpNotice(ctx context.Context, e *turnEnv) {
	if e.heldUp < time.Second || e.agent.ID == 0 {
		return
	}
	s.noticeOnce(ctx, e, "ndb", fmt.Sprintf("@%s was held up for %s: the database did not answer. It went on where it was when the database came back.",
		e.agent.Handle, e.heldUp.Round(time.Second)))
}

// redrive puts the wakes of a turn a database outage cut off back to
// pending as soon as the database takes the write, polling with backoff
// (the write is the probe). The caller, the agent's worker, then claims
// them again at once, before any newer wake of the agent.
func (w *workers) redrive(ctx context.Context, e *turnEnv) {
	start := time.Now()
	e.log.Warn("agents: a database outage cut the turn off; re-driving its wakes when the database answers", "err", e.lost)
	for n := 0; ; n++ {
		var requeued bool
		_, err := w.db.Transact(ctx, func(tx *store.Tx) error {
			var err error
			if requeued, err = tx.RequeueTurn(e.turn.ID, w.owner); err != nil || !requeued {
				return err
			}
			_, err = tx.Emit(bullpen.EventTurnAbandoned, e.turn.ChannelID, e.aud, bullpen.TurnEvent{TurnID: e.turn.ID, AgentID: e.turn.AgentID,
				Handle: e.agent.Handle, Error: "a database outage cut the turn off; its wakes run again now"})
			return err
		})
		switch {
		case err == nil:
			if requeued {
				e.log.Info("agents: re-driving the wakes of a turn a database outage cut off", "waited", time.Since(start).Round(time.Millisecond))
				w.redriveNotice(ctx, e, time.Since(start))
			}
			return
		case !store.IsOutage(err):
			// The sweeper re-queues the turn when its lease runs out.
			e.log.Error("agents: re-drive a turn cut off by an outage", "err", err)
			return
		}
		if !sleepCtx(ctx, outageBackoff(n)) {
			return
		}
	}
}

// redriveNotice tells the channel that the turn starts again.
func (w *workers) redriveNotice(ctx context.Context, e *turnEnv, waited time.Duration) {
	agent := e.agent
	if agent.ID == 0 {
		m, err := w.db.Member(ctx, e.turn.AgentID)
		if err != nil {
			return
		}
		agent = m
	}
	w.notice(ctx, agent, e.turn.ChannelID, e.thread, fmt.Sprintf("@%s's turn was cut off by a database outage (%s); it runs again from where it stopped.",
		agent.Handle, max(waited, time.Second).Round(time.Second)))
}
