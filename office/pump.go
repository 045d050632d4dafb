package office

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/live"
)

// pumpBatch is how many stored events the pump reads at once.
const pumpBatch = 500

// pumpPoll is how often the pump reads the table without being told to:
// a lost notification delays events, it never drops them.
const pumpPoll = time.Second

// gapPatience is how long the pump waits for a missing sequence number
// before it passes over it. Sequences are gap-free, so a hole is a
// transaction that has not become visible yet; this bounds the wait should
// one ever be missing for good (rows deleted by hand).
const gapPatience = 3 * time.Second

// publisher is what the pump needs of the hub; *live.Hub provides it.
type publisher interface {
	Publish(evs []bullpen.Event)
	Last() int64
}

// pump feeds the hub when other processes write to the same database: it
// publishes this process's commits at once when they are next in order,
// and otherwise reads the table after the hub's last sequence, so that
// subscribers see every replica's events in sequence order, none twice.
type pump struct {
	hub      publisher
	events   live.EventReader
	log      *slog.Logger
	kick     chan struct{}
	mu       sync.Mutex // orders publishes into the hub
	gapSince time.Time  // when the current hole was first seen
}

func newPump(hub publisher, events live.EventReader, log *slog.Logger) *pump {
	return &pump{hub: hub, events: events, log: log, kick: make(chan struct{}, 1)}
}

// local publishes this process's committed events; it never blocks (it
// runs under the store's write lock).
func (p *pump) local(evs []bullpen.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(evs) > 0 && evs[0].Seq == p.hub.Last()+1 {
		p.hub.Publish(evs)
		return
	}
	p.poke() // another replica's events come first: read them in order
}

// notified handles a NOTIFY payload: the last sequence another write
// stored ("" after a reconnect: unknown).
func (p *pump) notified(payload string) {
	if seq, err := strconv.ParseInt(payload, 10, 64); err == nil && seq <= p.hub.Last() {
		return // ours, already published
	}
	p.poke()
}

func (p *pump) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// run drains the table whenever poked, and every pumpPoll, until done.
func (p *pump) run(done <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-done; cancel() }()
	t := time.NewTicker(pumpPoll)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-p.kick:
		case <-t.C:
		}
		for !p.drain(ctx) && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond) // a hole: let its writer commit
		}
	}
}

// drain publishes the stored events after the hub's last one. It reports
// false when it stopped at a hole.
func (p *pump) drain(ctx context.Context) bool {
	for {
		evs, err := p.events.EventsAfter(ctx, p.hub.Last(), pumpBatch)
		if err != nil {
			if ctx.Err() == nil {
				p.log.Error("office: read events for the hub", "err", err)
			}
			return true // retried at the next poke or poll
		}
		if !p.publish(evs) {
			return false
		}
		if len(evs) < pumpBatch {
			return true
		}
	}
}

// publish hands the hub the events that continue its sequence. It reports
// false when it stopped at a hole.
func (p *pump) publish(evs []bullpen.Event) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	next := p.hub.Last() + 1
	out := make([]bullpen.Event, 0, len(evs))
	for _, ev := range evs {
		if ev.Seq < next {
			continue // published meanwhile
		}
		if ev.Seq != next && !p.passGap(next, ev.Seq) {
			p.hub.Publish(out)
			return false
		}
		if enc, err := json.Marshal(ev); err == nil {
			ev.Encoded = enc
		}
		out = append(out, ev)
		next = ev.Seq + 1
	}
	p.gapSince = time.Time{}
	p.hub.Publish(out)
	return true
}

// passGap reports whether the hole before seq has lasted long enough to
// pass over it.
func (p *pump) passGap(want, seq int64) bool {
	if p.gapSince.IsZero() {
		p.gapSince = time.Now()
		return false
	}
	if time.Since(p.gapSince) < gapPatience {
		return false
	}
	p.log.Warn("office: event sequence has a hole; passing over it", "from", want, "to", seq-1)
	p.gapSince = time.Time{}
	return true
}
