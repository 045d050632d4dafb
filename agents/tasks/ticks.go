package tasks

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Tick fires or skips every routine that is due, each in one transaction
// with its tick row. The row is unique per routine and due time and the
// routine's next run moves past now in the same transaction, so across
// replicas (the writers' lock orders them) and crashes (a tick that did
// not commit did not happen) each tick happens exactly once. Missed ticks
// after downtime make one run. It returns how many fired and skipped.
func (s *Service) Tick(ctx context.Context) (fired, skipped int, err error) {
	for range 20 { // at most 20×50 routines per call; the rest wait for the next
		var n int
		_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
			n = 0
			due, err := tx.DueRoutines(tx.Now(), 50)
			if err != nil {
				return err
			}
			for _, r := range due {
				k, err := s.fire(tx, r)
				if err != nil {
					return fmt.Errorf("tasks: routine %d: %w", r.ID, err)
				}
				if k.State == bullpen.TickFired {
					fired++
				} else {
					skipped++
				}
				n++
			}
			return nil
		})
		if err != nil || n < 50 {
			return fired, skipped, err
		}
	}
	return fired, skipped, nil
}

// fire runs one due tick of r in tx: skipped with a reason when its
// condition says so, else the action.
func (s *Service) fire(tx *store.Tx, r bullpen.Routine) (bullpen.RoutineTick, error) {
	now := tx.Now()
	due := *r.NextRunAt
	next, n := catchUp(r, due, now)
	k := bullpen.RoutineTick{RoutineID: r.ID, DueAt: due, State: bullpen.TickFired, Missed: n - 1}
	c, err := s.db.Channel(tx.Context(), r.ChannelID)
	if err != nil {
		return k, err
	}
	latest, err := tx.LatestMessageID(c.ID)
	if err != nil {
		return k, err
	}
	if k.Reason, err = s.skipReason(tx, r, c, latest); err != nil {
		return k, err
	}
	if k.Reason != "" {
		k.State = bullpen.TickSkipped
	} else if err := s.act(tx, r, c, &k); err != nil {
		return k, err
	}
	if k.MessageID != 0 {
		latest = k.MessageID
	}
	if k, err = tx.CreateTick(k); err != nil {
		return k, err
	}
	r.NextRunAt, r.LastRunAt, r.LastState, r.LastReason, r.LastMessageID = &next, &due, k.State, k.Reason, latest
	if r, err = tx.UpdateRoutine(r); err != nil {
		return k, err
	}
	typ := bullpen.EventRoutineFired
	if k.State == bullpen.TickSkipped {
		typ = bullpen.EventRoutineSkipped
	}
	return k, s.emitRoutine(tx, typ, bullpen.RoutineEvent{Routine: r, Tick: &k})
}

// skipReason says why this tick is skipped, "" to fire.
func (s *Service) skipReason(tx *store.Tx, r bullpen.Routine, c bullpen.Channel, latest int64) (string, error) {
	switch r.Skip {
	case bullpen.SkipNoNewMessages:
		if latest <= r.LastMessageID {
			return fmt.Sprintf("no new messages in #%s since the last run", c.Name), nil
		}
	case bullpen.SkipNoOpenLabel:
		ts, err := tx.Tasks(bullpen.TaskFilter{Label: r.SkipLabel, Open: true, Limit: 1})
		if err != nil {
			return "", err
		}
		if len(ts) == 0 {
			return fmt.Sprintf("no open tasks labelled %s", r.SkipLabel), nil
		}
	}
	return "", nil
}

// act does r's action in tx: a message from its creator that mentions
// the agent (the mention rules wake it), or a task from the template.
func (s *Service) act(tx *store.Tx, r bullpen.Routine, c bullpen.Channel, k *bullpen.RoutineTick) error {
	creator, err := s.db.Member(tx.Context(), r.CreatorID)
	if err != nil {
		return err
	}
	if r.Action == bullpen.RoutineWake {
		agent, err := s.db.Member(tx.Context(), r.AgentID)
		if err != nil {
			return err
		}
		body := fmt.Sprintf("@%s %s\n\n_(routine: %s)_", agent.Handle, r.Prompt, r.Name)
		m, err := s.off.PostInTx(tx, creator, c, bullpen.PostInput{ChannelID: c.ID, Body: body})
		k.MessageID = m.ID
		return err
	}
	in := *r.Task
	in.ChannelID, in.Subtasks = c.ID, nil
	t, owner, err := s.newTask(tx.Context(), creator, c, in)
	if err != nil {
		return err
	}
	if err := s.createTx(tx, creator, c, &t, owner, nil, nil); err != nil {
		return err
	}
	k.TaskID, k.MessageID = t.ID, t.ThreadID
	return nil
}

// RunRoutines ticks every interval until ctx ends.
func (s *Service) RunRoutines(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if _, _, err := s.Tick(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("tasks: routines", "err", err)
			}
		}
	}
}
