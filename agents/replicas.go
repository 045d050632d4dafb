package agents

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// routerLockKey is the PostgreSQL session advisory lock whose holder runs
// the database's one wake router. The other advisory lock keys: 7410 the
// event writers (store/tx.go), 7413 the Telegram bridge's leader
// (bridge/telegram/leader.go), 7414<<32 | member id an agent's
// workspace create (sandboxes/agents.go).
const routerLockKey = 7412

// routerLockWait is how long a process that does not share the database
// waits for the router lock at start: a killed predecessor's session may
// take a moment to end.
const routerLockWait = 10 * time.Second

// pendingPoll is how often a replica looks for pending wakes it was not
// told about (a turn that ran elsewhere and died, a lost notification).
const pendingPoll = 2 * time.Second

// takeRouterLock is called by Start. A process that shares the database
// may start without the lock (nil: it stands by); one that does not must
// get it, or refuse to run a second router with a clear message.
func (r *router) takeRouterLock(ctx context.Context) (*store.SessionLock, error) {
	deadline := time.Now().Add(routerLockWait)
	for {
		lock, err := r.db.TryLock(ctx, routerLockKey)
		if err != nil || lock != nil || r.shared {
			return lock, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("agents: another Bullpen process runs agents on this database (it holds the wake router lock); stop it, or set BULLPEN_SHARED_DATABASE=on on every process so that they share the work")
		}
		if !sleepCtx(ctx, 500*time.Millisecond) {
			return nil, ctx.Err()
		}
	}
}

// awaitRouterLock waits until this process holds the router lock; nil
// when ctx ends first.
func (r *router) awaitRouterLock(ctx context.Context) *store.SessionLock {
	for {
		lock, err := r.db.TryLock(ctx, routerLockKey)
		if err != nil && ctx.Err() == nil {
			r.log.Error("agents: router lock", "err", err)
		}
		if lock != nil {
			return lock
		}
		if !sleepCtx(ctx, time.Second) {
			return nil
		}
	}
}

// watchRouterLock cancels routing when the lock's session is lost, so
// that a process cut off from the database stops routing before another
// one takes over.
func (r *router) watchRouterLock(ctx context.Context, lock *store.SessionLock, lost context.CancelFunc) {
	for sleepCtx(ctx, 2*time.Second) {
		if !lock.Held(ctx) && ctx.Err() == nil {
			r.log.Warn("agents: lost the wake router lock; standing by")
			lost()
			return
		}
	}
}

// watchWakes pokes this process's workers for wakes queued by whichever
// replica routes: it follows the wake events of the shared log, and polls
// for pending wakes as a fallback.
func (r *router) watchWakes(ctx context.Context) {
	go func() {
		for sleepCtx(ctx, pendingPoll) {
			ids, err := r.db.PendingAgents(ctx)
			if err != nil {
				continue
			}
			for _, id := range ids {
				r.poke(id)
			}
		}
	}()
	feed := r.off.Subscribe(r.off.Hub().Last())
	defer feed.Close()
	for {
		evs, err := feed.Next(ctx, 200)
		if err != nil {
			return
		}
		for _, ev := range evs {
			if ev.Type != bullpen.EventWakeQueued {
				continue
			}
			if p, err := bullpen.WakeQueuedOf(ev); err == nil {
				r.poke(p.AgentID)
			}
		}
	}
}

// sleepCtx waits d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// startLocked reclaims turns a previous run left behind and, when this
// process holds the router lock, returns where its router resumes.
func (s *Service) startLocked(ctx context.Context, lock *store.SessionLock) (int64, error) {
	if err := s.workers.reclaim(ctx, !s.cfg.SharedDatabase); err != nil {
		return 0, err
	}
	if lock == nil {
		return 0, nil
	}
	return s.router.routerStart(ctx)
}
