package live

import (
	"context"
	"fmt"

	"github.com/bullpen-hq/bullpen"
)

// EventReader reads stored events; *store.DB implements it.
type EventReader interface {
	EventsAfter(ctx context.Context, since int64, limit int) ([]bullpen.Event, error)
}

// Feed is one subscriber's ordered stream: first the stored events after
// its starting sequence, then live ones, with no gap and no duplicate.
// A Feed is used by one goroutine.
type Feed struct {
	hub      *Hub
	events   EventReader
	sub      *hubSub
	last     int64 // highest sequence returned
	storedTo int64 // events up to here come from the store
	resumes  int
	pending  []bullpen.Event   // the rest of the batch being read
	batches  [][]bullpen.Event // batches taken from the hub, not yet read
}

// NewFeed starts a feed after sequence since.
func NewFeed(hub *Hub, events EventReader, since int64) *Feed {
	return &Feed{hub: hub, events: events, last: since}
}

// Next blocks until at least one event is ready and returns up to max of
// them (ephemeral events included, with Seq 0). When the feed had fallen
// behind, it has been cut off by the hub and catches up from the store.
func (f *Feed) Next(ctx context.Context, max int) ([]bullpen.Event, error) {
	for {
		if f.sub == nil {
			f.sub, f.storedTo = f.hub.attach()
		}
		if f.last < f.storedTo {
			evs, err := f.events.EventsAfter(ctx, f.last, max)
			if err != nil {
				return nil, fmt.Errorf("live: feed catch-up: %w", err)
			}
			n := 0
			for _, ev := range evs {
				if ev.Seq <= f.storedTo {
					evs[n] = ev
					n++
				}
			}
			if n == 0 {
				f.storedTo = f.last // the store had nothing more
				continue
			}
			f.last = evs[n-1].Seq
			return evs[:n], nil
		}
		if out := f.More(nil, max); len(out) > 0 {
			return out, nil
		}
		if f.sub == nil {
			continue // cut off: catch up from the store
		}
		select {
		case <-f.sub.wake:
			f.takeQueued()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// takeQueued moves the hub's queued batches into the feed; when the hub
// cut the feed off, it drops the subscription, so that Next catches up
// from the store.
func (f *Feed) takeQueued() {
	batches, cut := f.sub.take()
	if cut {
		f.sub = nil
		f.resumes++
		f.batches, f.pending = nil, nil
		return
	}
	f.batches = append(f.batches, batches...)
}

// More appends to out, without blocking, the live events already queued,
// up to max in all. A writer that wants larger batches calls it after a
// short pause. When the feed has been cut off, or has stored events to
// catch up on, it appends nothing: the next call to Next reads them.
func (f *Feed) More(out []bullpen.Event, max int) []bullpen.Event {
	if f.last < f.storedTo {
		return out // stored events come first: Next reads them
	}
	polled := false
	for len(out) < max {
		if len(f.pending) > 0 {
			ev := f.pending[0]
			f.pending = f.pending[1:]
			out = f.take(out, ev)
			continue
		}
		if len(f.batches) > 0 {
			f.pending, f.batches[0] = f.batches[0], nil
			f.batches = f.batches[1:]
			continue
		}
		if f.sub == nil || polled {
			return out
		}
		polled = true
		select {
		case <-f.sub.wake:
			f.takeQueued()
		default:
			return out
		}
	}
	if len(f.batches) == 0 {
		f.batches = nil // let an idle feed hold no backing array
	}
	return out
}

// take appends ev unless it is a stored event already returned.
func (f *Feed) take(out []bullpen.Event, ev bullpen.Event) []bullpen.Event {
	if ev.Seq != 0 {
		if ev.Seq <= f.last {
			return out
		}
		f.last = ev.Seq
	}
	return append(out, ev)
}

// Last returns the highest sequence returned so far.
func (f *Feed) Last() int64 { return f.last }

// Resumes counts how often the feed was cut off for falling behind.
func (f *Feed) Resumes() int { return f.resumes }

// Close detaches the feed from the hub.
func (f *Feed) Close() {
	if f.sub != nil {
		f.hub.detach(f.sub)
		f.sub = nil
	}
}
