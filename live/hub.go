// Package live fans committed events out to subscribers in process: the
// Hub, and the Feed that gives one subscriber its stored events, then the
// live ones, with no gap and no duplicate.
package live

import (
	"sync"
	"sync/atomic"

	"github.com/bullpen-hq/bullpen"
)

// Hub fans committed events out to subscribers in process. Each subscriber
// has a backlog bounded in events and in bytes; one that falls behind is
// cut off (its backlog dropped, its wake-up closed) and its Feed resumes
// from the last sequence it saw, reading the stored events it missed.
// Nothing is dropped silently.
type Hub struct {
	mu       sync.Mutex
	last     int64 // highest sequence published
	subs     map[*hubSub]struct{}
	buffer   int   // events a subscriber may lag
	maxBytes int64 // encoded bytes a subscriber may lag
}

// DefaultBacklogBytes bounds a subscriber's backlog in encoded bytes
// unless LimitBytes says otherwise.
const DefaultBacklogBytes = 4 << 20

// hubSub is one subscriber. The hub appends each publish to its queue as
// one batch (shared by every subscriber, never copied) and wakes it; an
// idle subscriber holds no buffer, only this struct and its wake channel.
type hubSub struct {
	wake   chan struct{} // one pending wake-up; closed when cut off
	mu     sync.Mutex
	queue  [][]bullpen.Event
	events int64 // events in queue
	bytes  int64 // their encoded size
	cut    bool
	queued atomic.Int64 // events in queue, for tests and metrics
}

// NewHub returns a hub whose subscribers may lag up to buffer events (and
// DefaultBacklogBytes); last is the highest sequence already stored.
func NewHub(last int64, buffer int) *Hub {
	if buffer <= 0 {
		buffer = 4096
	}
	return &Hub{last: last, subs: map[*hubSub]struct{}{}, buffer: buffer, maxBytes: DefaultBacklogBytes}
}

// LimitBytes sets how many encoded bytes a subscriber may lag before it
// is cut off.
func (h *Hub) LimitBytes(n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.maxBytes = n
}

// Publish delivers committed events, which must come in sequence order.
// It never blocks. Subscribers share evs: the caller must not change it
// afterwards.
func (h *Hub) Publish(evs []bullpen.Event) {
	if len(evs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range evs {
		if ev.Seq > h.last {
			h.last = ev.Seq
		}
	}
	h.send(evs)
}

// PublishEphemeral delivers an event that is not stored (Seq 0), such as
// a token delta. Subscribers that cannot take it are cut off like any
// other slow subscriber.
func (h *Hub) PublishEphemeral(ev bullpen.Event) {
	ev.Seq = 0
	h.mu.Lock()
	defer h.mu.Unlock()
	h.send([]bullpen.Event{ev})
}

func (h *Hub) send(evs []bullpen.Event) {
	n, size := int64(len(evs)), batchBytes(evs)
	for s := range h.subs {
		if !s.push(evs, n, size, int64(h.buffer), h.maxBytes) {
			h.cut(s)
		}
	}
}

// batchBytes is the encoded size of evs, what a frame of them costs.
func batchBytes(evs []bullpen.Event) int64 {
	var n int64
	for i := range evs {
		n += int64(len(evs[i].Encoded)) + 1
	}
	return n
}

// push queues a batch and wakes the subscriber; false when that would take
// it past either bound. An idle subscriber takes a batch of any size: the
// bound is on how far one may lag, not on how much one write stores.
func (s *hubSub) push(evs []bullpen.Event, n, size, maxEvents, maxBytes int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.events > 0 && (s.events+n > maxEvents || s.bytes+size > maxBytes) {
		return false
	}
	s.queue = append(s.queue, evs)
	s.events += n
	s.bytes += size
	s.queued.Store(s.events)
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
	return true
}

// take returns the queued batches and empties the queue; cut reports that
// the hub cut the subscriber off (its queue is gone: it resumes from the
// store).
func (s *hubSub) take() (batches [][]bullpen.Event, cut bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	batches, s.queue = s.queue, nil
	s.events, s.bytes = 0, 0
	s.queued.Store(0)
	return batches, s.cut
}

// cut cuts a subscriber off: its backlog is dropped and it resumes from
// the store.
func (h *Hub) cut(s *hubSub) {
	s.mu.Lock()
	s.cut, s.queue, s.events, s.bytes = true, nil, 0, 0
	s.queued.Store(0)
	s.mu.Unlock()
	close(s.wake)
	delete(h.subs, s)
}

// attach registers a subscriber and returns the highest sequence published
// before it: later events reach it live, earlier ones are in the store.
func (h *Hub) attach() (*hubSub, int64) {
	s := &hubSub{wake: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs[s] = struct{}{}
	return s, h.last
}

// detach unregisters a subscriber; detaching twice is harmless.
func (h *Hub) detach(s *hubSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		h.cut(s)
	}
}

// Last returns the highest published sequence.
func (h *Hub) Last() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}
