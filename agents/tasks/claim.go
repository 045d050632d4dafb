package tasks

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Claim makes actor the task's owner. Someone else's claim that has not
// lapsed wins: the answer is a *bullpen.TaskClaimedError (409) holding
// the task and its owner, and nothing changes. A task whose dependencies
// are not all done is claimed as blocked; a closed task or one in review
// cannot be claimed. Claiming one's own task again renews the lease.
func (s *Service) Claim(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Task, error) {
	return s.ClaimWith(ctx, actor, id, nil)
}

// ClaimWith is Claim that runs commit in the claim's transaction.
func (s *Service) ClaimWith(ctx context.Context, actor bullpen.Member, id int64, commit Commit) (bullpen.Task, error) {
	return s.change(ctx, id, commit, func(tx *store.Tx, t *bullpen.Task, c bullpen.Channel) error {
		if t.Closed() || t.State == bullpen.TaskInReview {
			return bullpen.Errorf(bullpen.EINVALID, "task %d is %s: it cannot be claimed", t.ID, t.State)
		}
		now := tx.Now()
		if t.OwnerID != 0 && t.OwnerID != actor.ID && !lapsed(*t, now) {
			return &bullpen.TaskClaimedError{Task: *t, Reason: fmt.Sprintf("task %d is already claimed by member %d", t.ID, t.OwnerID)}
		}
		from, renew := t.State, t.OwnerID == actor.ID
		t.OwnerID, t.LeaseUntil, t.Failures = actor.ID, s.lease(actor), 0
		t.State = bullpen.TaskInProgress
		if err := unfinishedDeps(tx, *t); err != nil {
			t.State = bullpen.TaskBlocked
		}
		if renew && from == t.State {
			saved, err := tx.UpdateTask(*t) // the lease only: no event
			*t = saved
			return err
		}
		return s.save(tx, t, c, bullpen.EventTaskClaimed, bullpen.TaskEvent{ByID: actor.ID, From: from})
	})
}

// lapsed reports whether t's lease ended before now.
func lapsed(t bullpen.Task, now time.Time) bool {
	return t.LeaseUntil != nil && t.LeaseUntil.Before(now)
}

// Release gives the task up: it returns to open without owner. Its owner
// or a person may release it.
func (s *Service) Release(ctx context.Context, actor bullpen.Member, id int64, note string) (bullpen.Task, error) {
	if err := bullpen.ValidateTaskNote(note); err != nil {
		return bullpen.Task{}, err
	}
	return s.change(ctx, id, nil, func(tx *store.Tx, t *bullpen.Task, c bullpen.Channel) error {
		if t.OwnerID == 0 {
			return bullpen.Errorf(bullpen.EINVALID, "task %d has no owner to release", t.ID)
		}
		if t.OwnerID != actor.ID && actor.Kind != bullpen.KindHuman {
			return bullpen.Errorf(bullpen.EFORBIDDEN, "only the owner or a person can release task %d", t.ID)
		}
		return s.release(tx, t, c, actor.ID, note, "released")
	})
}

// release clears t's owner and returns it to open (a closed task or one
// in review keeps its state).
func (s *Service) release(tx *store.Tx, t *bullpen.Task, c bullpen.Channel, by int64, note, reason string) error {
	from := t.State
	t.OwnerID, t.LeaseUntil, t.Failures = 0, nil, 0
	if t.State == bullpen.TaskInProgress || t.State == bullpen.TaskBlocked {
		t.State = bullpen.TaskOpen
	}
	return s.save(tx, t, c, bullpen.EventTaskReleased, bullpen.TaskEvent{ByID: by, From: from, Note: note, Reason: reason})
}

// Sweep returns to open, each with an event saying why, the claims whose
// lease lapsed and those of fired agents. Replicas may sweep at once: the
// writers' lock lets one release each task.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	n := 0
	_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
		n = 0
		ts, err := tx.LapsedTasks(tx.Now(), 100)
		if err != nil {
			return err
		}
		for i := range ts {
			c, err := s.db.Channel(ctx, ts[i].ChannelID)
			if err != nil {
				return fmt.Errorf("tasks: sweep: %w", err)
			}
			reason := "the owner was fired"
			if lapsed(ts[i], tx.Now()) {
				reason = "the owner's lease lapsed"
			}
			if err := s.release(tx, &ts[i], c, 0, "", reason); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// Run sweeps every interval until ctx ends.
func (s *Service) Run(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("tasks: sweep", "err", err)
			}
		}
	}
}

// RecordTurn adds a finished turn of agent on task id to its totals (see
// TurnFinished).
func (s *Service) RecordTurn(ctx context.Context, id, agentID int64, ok bool, usage bullpen.TaskTokens) error {
	_, err := s.change(ctx, id, nil, func(tx *store.Tx, t *bullpen.Task, c bullpen.Channel) error {
		return s.recordTurn(tx, t, c, agentID, ok, usage)
	})
	return err
}

// TurnFinished is told by the agents' runtime, in the transaction that
// stores a turn's outcome, of a turn woken in thread threadID: when that
// is a task's thread, the turn records the task and the task adds the
// turn's usage. A turn of the owner that succeeded renews the claim's
// lease; after MaxFailures failed turns in a row the task returns to open.
func (s *Service) TurnFinished(tx *store.Tx, turn bullpen.Turn, threadID int64, ok bool, modelCalls int) error {
	if threadID == 0 {
		return nil
	}
	t, err := tx.TaskByThread(threadID)
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := tx.SetTurnTask(turn.ID, t.ID); err != nil {
		return err
	}
	c, err := s.db.Channel(tx.Context(), t.ChannelID)
	if err != nil {
		return fmt.Errorf("tasks: channel of task %d: %w", t.ID, err)
	}
	usage := bullpen.TaskTokens{Turns: 1, ModelCalls: int64(modelCalls), Input: int64(turn.InputTokens), Output: int64(turn.OutputTokens)}
	return s.recordTurn(tx, &t, c, turn.AgentID, ok, usage)
}

func (s *Service) recordTurn(tx *store.Tx, t *bullpen.Task, c bullpen.Channel, agentID int64, ok bool, usage bullpen.TaskTokens) error {
	if err := tx.AddTaskUsage(t.ID, usage); err != nil {
		return err
	}
	saved, err := tx.Task(t.ID)
	if err != nil {
		return err
	}
	*t = saved
	if t.OwnerID == agentID && !t.Closed() {
		if ok {
			t.Failures = 0
			if t.LeaseUntil != nil {
				l := tx.Now().Add(s.cfg.LeaseTTL)
				t.LeaseUntil = &l
			}
		} else if t.Failures++; t.Failures >= s.cfg.MaxFailures {
			return s.release(tx, t, c, 0, "", fmt.Sprintf("%d failed turns in a row", t.Failures))
		}
	}
	return s.save(tx, t, c, bullpen.EventTaskTurn, bullpen.TaskEvent{From: t.State})
}
