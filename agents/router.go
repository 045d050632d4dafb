package agents

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// routerCursor names the router's position in the event log.
const routerCursor = "wake-router"

// cursorEvery bounds how many events the router may process without
// saving its cursor. Events that wake nobody are harmless to see twice.
const cursorEvery = 256

// routerStart returns where the router resumes: its stored cursor, or the
// current end of the log on the very first start (old messages wake
// nobody).
func (r *router) routerStart(ctx context.Context) (int64, error) {
	seq, err := r.db.Cursor(ctx, routerCursor)
	if err == nil {
		return seq, nil
	}
	if !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return 0, err
	}
	last := r.off.Hub().Last()
	err = r.db.Transact(ctx, func(tx routerTx) error { return tx.SetCursor(routerCursor, last) })
	return last, err
}

// runRouter routes while this process holds the router lock, from since
// when it already does (lock not nil), and otherwise stands by until the
// lock comes free: one router per database, whichever replica it is in.
func (r *router) runRouter(ctx context.Context, lock *store.SessionLock, since int64) {
	for ctx.Err() == nil {
		if lock == nil {
			if lock = r.awaitRouterLock(ctx); lock == nil {
				return
			}
			var err error
			if since, err = r.routerStart(ctx); err != nil {
				r.log.Error("agents: router cursor", "err", err)
				lock.Release()
				lock = nil
				sleepCtx(ctx, time.Second)
				continue
			}
			r.log.Info("agents: this process now routes wakes", "from", since)
		}
		lctx, cancel := context.WithCancel(ctx)
		go r.watchRouterLock(lctx, lock, cancel)
		r.routeFrom(lctx, since)
		cancel()
		lock.Release()
		lock = nil
		sleepCtx(ctx, time.Second) // the feed or the lock failed: do not spin
	}
}

// routeFrom consumes the event feed from since and turns messages into
// wakes. It blocks on the feed: nothing runs while nothing happens.
func (r *router) routeFrom(ctx context.Context, since int64) {
	feed := r.off.Subscribe(since)
	defer feed.Close()
	saved, pending := since, since
	r.routed.Store(since)
	for {
		evs, err := feed.Next(ctx, 200)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Error("agents: router feed", "err", err)
			}
			return
		}
		for _, ev := range evs {
			if ev.Seq == 0 {
				continue // ephemeral
			}
			pending = ev.Seq
			if ev.Type != bullpen.EventMessagePosted {
				continue
			}
			for attempt := 0; ; attempt++ {
				wrote, err := r.route(ctx, ev)
				if err == nil {
					if wrote {
						saved = ev.Seq
					}
					break
				}
				if ctx.Err() != nil {
					return
				}
				r.log.Error("agents: route message", "seq", ev.Seq, "err", err)
				if store.IsOutage(err) {
					// The database is out: every message waits for it, so
					// none is skipped; try again as soon as it answers.
					if !sleepCtx(ctx, outageBackoff(attempt)) {
						return
					}
					continue
				}
				if attempt >= 5 {
					break // give up on this one message rather than stall every agent
				}
				time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
			}
		}
		r.routed.Store(pending)
		if pending-saved >= cursorEvery {
			if err := r.db.Transact(ctx, func(tx routerTx) error { return tx.SetCursor(routerCursor, pending) }); err == nil {
				saved = pending
			}
		}
	}
}

// route applies the wake rules to one message.posted event. Wakes, their
// events, limit events and the cursor commit in one transaction, so a
// restart neither loses nor repeats a wake. It reports whether it wrote.
func (r *router) route(ctx context.Context, ev bullpen.Event) (bool, error) {
	msg, err := bullpen.MessageOf(ev)
	if err != nil {
		return false, fmt.Errorf("agents: route: %w", err)
	}
	in, err := r.wakeInput(ctx, msg)
	if err != nil {
		return false, err
	}
	targets := WakeTargets(in)
	if len(targets) == 0 {
		return false, nil
	}
	r.teach(ctx, in, targets)
	hopStop, hops := false, 0
	if in.Author.Kind == bullpen.KindAgent {
		if hops, err = r.hops(ctx, msg); err != nil {
			return false, err
		}
		hopStop = hops >= r.hopBudget
	}
	var queued []bullpen.Wake
	aud := audience(in.Channel)
	err = r.db.Transact(ctx, func(tx routerTx) error {
		if hopStop {
			if hops > r.hopBudget {
				return tx.SetCursor(routerCursor, ev.Seq) // already announced for this chain
			}
			for _, t := range targets {
				detail := fmt.Sprintf("@%s was not woken: %d agent-to-agent messages in a row in this thread without a human (hop budget %d). A human message resets it.",
					in.Members[t.AgentID].Handle, hops, r.hopBudget)
				if _, err := tx.Emit(bullpen.EventLimitReached, msg.ChannelID, aud, bullpen.LimitEvent{AgentID: t.AgentID,
					Handle: in.Members[t.AgentID].Handle, Limit: bullpen.LimitHops, Detail: detail, MessageID: msg.ID,
					Budget: r.hopBudget, ThreadID: rootOf(msg)}); err != nil {
					return err
				}
			}
			return tx.SetCursor(routerCursor, ev.Seq)
		}
		ws := make([]bullpen.Wake, len(targets))
		for i, t := range targets {
			ws[i] = bullpen.Wake{AgentID: t.AgentID, ChannelID: msg.ChannelID, MessageID: msg.ID, Reason: t.Reason}
		}
		var err error
		if queued, err = tx.CreateWakes(ws); err != nil {
			return err
		}
		for _, w := range queued {
			if _, err := tx.Emit(bullpen.EventWakeQueued, msg.ChannelID, aud, bullpen.WakeQueued{WakeID: w.ID, AgentID: w.AgentID,
				Handle: in.Members[w.AgentID].Handle, MessageID: msg.ID, Reason: w.Reason}); err != nil {
				return err
			}
		}
		return tx.SetCursor(routerCursor, ev.Seq)
	})
	if err != nil {
		return false, err
	}
	if hopStop && hops == r.hopBudget {
		r.notice(ctx, in.Members[targets[0].AgentID], msg.ChannelID, threadOf(msg),
			fmt.Sprintf("Stopped an agent chain: hop budget reached (%d agent-to-agent messages in a row in this thread without a human message). Post a message to continue.", r.hopBudget))
	}
	for _, w := range queued {
		r.poke(w.AgentID)
	}
	return true, nil
}

// wakeInput loads what the wake rules need about a message: of the
// members, only those the rules can name (the author, the channel's
// members, the thread's authors and the mentioned handles), so that
// routing a message costs the same in an office of 200 agents as in one
// of 10.
func (r *router) wakeInput(ctx context.Context, msg bullpen.Message) (WakeInput, error) {
	in := WakeInput{Message: msg, Members: map[int64]bullpen.Member{}, Active: map[int64]bool{}}
	var err error
	if in.Channel, err = r.db.Channel(ctx, msg.ChannelID); err != nil {
		return in, err
	}
	if msg.ThreadID != 0 {
		if in.ThreadAuthors, err = r.db.ThreadAuthors(ctx, msg.ThreadID); err != nil {
			return in, err
		}
	}
	ids := append([]int64{msg.AuthorID}, in.Channel.MemberIDs...)
	if in.Members, err = r.db.MembersByID(ctx, append(ids, in.ThreadAuthors...)); err != nil {
		return in, err
	}
	var handles []string
	for _, h := range msg.Mentions {
		if h != "all" && h != "here" {
			handles = append(handles, h)
		}
	}
	mentioned, err := r.db.MembersByHandle(ctx, handles)
	if err != nil {
		return in, err
	}
	maps.Copy(in.Members, mentioned)
	in.Author = in.Members[msg.AuthorID]
	states, err := r.db.AgentStates(ctx) // not Agents: no spec is needed here
	if err != nil {
		return in, err
	}
	for id, state := range states {
		in.Active[id] = state == bullpen.AgentActive
	}
	return in, nil
}

// hops counts the agent-written messages at the end of msg's thread (or
// of its channel's top level), msg included, back to the last human one.
// System notices neither count nor break a chain.
func (r *router) hops(ctx context.Context, msg bullpen.Message) (int, error) {
	tail, err := r.db.ChainTail(ctx, msg.ChannelID, msg.ThreadID, msg.ID, 4*r.hopBudget+4)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range tail {
		if m.Source == bullpen.SourceSystem {
			continue
		}
		if m.AuthorKind != string(bullpen.KindAgent) {
			break
		}
		n++
	}
	return n, nil
}

// threadOf returns the thread a reply to msg belongs in: msg's thread, or
// none for a top-level message.
func threadOf(msg bullpen.Message) int64 { return msg.ThreadID }

// rootOf is the thread a message belongs to: its root, or itself.
func rootOf(m bullpen.Message) int64 {
	if m.ThreadID != 0 {
		return m.ThreadID
	}
	return m.ID
}
