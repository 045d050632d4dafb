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
// has a bounded buffer; one that falls behind is cut off (its channel is
// closed) and its Feed resumes from the last sequence it saw, reading the
// stored events it missed. Nothing is dropped silently.
type Hub struct {
	mu     sync.Mutex
	last   int64 // highest sequence published
	subs   map[*hubSub]struct{}
	buffer int
}

// hubSub is one subscriber. The hub hands it each publish as one batch
// (one channel send per subscriber, however many events), and counts the
// events it has not taken yet against the buffer.
type hubSub struct {
	ch     chan []bullpen.Event
	queued atomic.Int64
}

// NewHub returns a hub whose subscribers buffer up to buffer events; last
// is the highest sequence already stored.
func NewHub(last int64, buffer int) *Hub {
	if buffer <= 0 {
		buffer = 4096
	}
	return &Hub{last: last, subs: map[*hubSub]struct{}{}, buffer: buffer}
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
	n := int64(len(evs))
	for s := range h.subs {
		// An idle subscriber takes a batch of any size: the bound is on
		// how far one may lag, not on how much one write stores.
		if q := s.queued.Load(); q > 0 && q+n > int64(h.buffer) {
			h.cut(s)
			continue
		}
		s.queued.Add(n)
		select {
		case s.ch <- evs:
		default:
			h.cut(s)
		}
	}
}

// cut cuts a subscriber off: it resumes from the store.
func (h *Hub) cut(s *hubSub) {
	close(s.ch)
	delete(h.subs, s)
}

// attach registers a subscriber and returns the highest sequence published
// before it: later events reach it live, earlier ones are in the store.
func (h *Hub) attach() (*hubSub, int64) {
	s := &hubSub{ch: make(chan []bullpen.Event, h.buffer)}
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
