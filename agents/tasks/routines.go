package tasks

import (
	"context"
	"fmt"
	"time"
	_ "time/tzdata" // routines name IANA zones; a host without zoneinfo still knows them

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/cron"
	"github.com/bullpen-hq/bullpen/store"
)

// CreateRoutine stores a routine; people only. Its first tick is the
// schedule's next time after now.
func (s *Service) CreateRoutine(ctx context.Context, actor bullpen.Member, in bullpen.RoutineInput) (bullpen.Routine, error) {
	if actor.Kind != bullpen.KindHuman {
		return bullpen.Routine{}, bullpen.Errorf(bullpen.EFORBIDDEN, "only a person can create routines")
	}
	r := bullpen.Routine{Enabled: true, CreatorID: actor.ID}
	in.Apply(&r)
	if err := s.checkRoutine(ctx, actor, &r); err != nil {
		return r, err
	}
	_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if r, err = tx.CreateRoutine(r); err != nil {
			return err
		}
		return s.emitRoutine(tx, bullpen.EventRoutineCreated, bullpen.RoutineEvent{Routine: r, ByID: actor.ID})
	})
	return r, err
}

// UpdateRoutine changes a routine (people only). A changed schedule, or
// turning it on, starts it from now: no catch-up for the time it was off.
func (s *Service) UpdateRoutine(ctx context.Context, actor bullpen.Member, id int64, in bullpen.RoutineInput) (bullpen.Routine, error) {
	if actor.Kind != bullpen.KindHuman {
		return bullpen.Routine{}, bullpen.Errorf(bullpen.EFORBIDDEN, "only a person can change routines")
	}
	r, err := s.db.Routine(ctx, id)
	if err != nil {
		return r, err
	}
	wasOn := r.Enabled
	in.Apply(&r)
	restart := in.Cron != nil || in.TZ != nil || in.IntervalSec != nil || (!wasOn && r.Enabled)
	if err := s.checkRoutine(ctx, actor, &r); err != nil {
		return r, err
	}
	_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
		cur, err := tx.Routine(id)
		if err != nil {
			return err
		}
		if !restart {
			r.NextRunAt = cur.NextRunAt
		}
		r.LastRunAt, r.LastState, r.LastReason, r.LastMessageID = cur.LastRunAt, cur.LastState, cur.LastReason, cur.LastMessageID
		if r, err = tx.UpdateRoutine(r); err != nil {
			return err
		}
		return s.emitRoutine(tx, bullpen.EventRoutineUpdated, bullpen.RoutineEvent{Routine: r, ByID: actor.ID})
	})
	return r, err
}

// DeleteRoutine removes a routine (people only); its ticks stay.
func (s *Service) DeleteRoutine(ctx context.Context, actor bullpen.Member, id int64) error {
	if actor.Kind != bullpen.KindHuman {
		return bullpen.Errorf(bullpen.EFORBIDDEN, "only a person can delete routines")
	}
	_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
		r, err := tx.Routine(id)
		if err != nil {
			return err
		}
		if err := tx.DeleteRoutine(id); err != nil {
			return err
		}
		r.Enabled = false
		return s.emitRoutine(tx, bullpen.EventRoutineDeleted, bullpen.RoutineEvent{Routine: r, ByID: actor.ID})
	})
	return err
}

// Routine returns a routine.
func (s *Service) Routine(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Routine, error) {
	return s.db.Routine(ctx, id)
}

// Routines lists the routines.
func (s *Service) Routines(ctx context.Context, actor bullpen.Member) ([]bullpen.Routine, error) {
	return s.db.Routines(ctx)
}

// RoutineTicks lists a routine's latest 50 ticks, newest first: fired or
// skipped, and why.
func (s *Service) RoutineTicks(ctx context.Context, actor bullpen.Member, id int64) ([]bullpen.RoutineTick, error) {
	if _, err := s.db.Routine(ctx, id); err != nil {
		return nil, err
	}
	return s.db.RoutineTicks(ctx, id, 50)
}

// checkRoutine checks r and its references, and sets its next run from
// now when it has none (a new or restarted schedule).
func (s *Service) checkRoutine(ctx context.Context, actor bullpen.Member, r *bullpen.Routine) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if _, err := s.off.Channel(ctx, actor, r.ChannelID); err != nil {
		return err
	}
	if r.Action == bullpen.RoutineWake {
		m, err := s.member(ctx, r.AgentID, "agent_id")
		if err != nil {
			return err
		}
		if m.Kind != bullpen.KindAgent {
			return bullpen.Errorf(bullpen.EINVALID, "agent_id @%s is not an agent", m.Handle)
		}
	}
	if r.Action == bullpen.RoutineTask {
		if _, err := s.member(ctx, r.Task.OwnerID, "task.owner_id"); err != nil {
			return err
		}
	}
	next, err := nextRun(*r, s.cfg.Now())
	if err != nil {
		return err
	}
	r.NextRunAt = &next
	return nil
}

// nextRun is r's first tick strictly after t. A cron expression that
// never fires (31 February) or an unknown zone is EINVALID.
func nextRun(r bullpen.Routine, t time.Time) (time.Time, error) {
	if r.IntervalSec > 0 {
		return t.Add(time.Duration(r.IntervalSec) * time.Second).UTC(), nil
	}
	sched, err := cron.Parse(r.Cron)
	if err != nil {
		return time.Time{}, bullpen.Errorf(bullpen.EINVALID, "%s", err.Error())
	}
	loc, err := time.LoadLocation(r.TZ)
	if err != nil || r.TZ == "Local" {
		return time.Time{}, bullpen.Errorf(bullpen.EINVALID, "tz %q is not an IANA time zone", r.TZ)
	}
	next, ok := sched.Next(t, loc)
	if !ok {
		return time.Time{}, bullpen.Errorf(bullpen.EINVALID, "cron %q never fires", r.Cron)
	}
	return next.UTC(), nil
}

// catchUp returns r's next tick strictly after now and how many ticks
// from due (included) it skips over: after downtime they make one run.
func catchUp(r bullpen.Routine, due, now time.Time) (time.Time, int64) {
	if r.IntervalSec > 0 {
		step := time.Duration(r.IntervalSec) * time.Second
		n := int64(now.Sub(due)/step) + 1
		return due.Add(time.Duration(n) * step), n
	}
	n, next := int64(0), due
	for !next.After(now) && n < 10000 {
		t, err := nextRun(r, next)
		if err != nil {
			return now.Add(24 * time.Hour * 365 * 100), n + 1 // unreachable: checked when stored
		}
		next, n = t, n+1
	}
	if !next.After(now) {
		next, _ = nextRun(r, now)
	}
	return next, n
}

func (s *Service) emitRoutine(tx *store.Tx, typ string, ev bullpen.RoutineEvent) error {
	c, err := s.db.Channel(tx.Context(), ev.Routine.ChannelID)
	if err != nil {
		return fmt.Errorf("tasks: routine channel: %w", err)
	}
	_, err = tx.Emit(typ, c.ID, audienceOf(c), ev)
	return err
}
