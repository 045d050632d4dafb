// Package live fans committed events out to subscribers in process: the
// Hub, and the Feed that gives one subscriber its stored events, then the
// live ones, with no gap and no duplicate.
package live

import (
	"sync"

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

type hubSub struct {
	ch chan bullpen.Event
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
// It never blocks.
func (h *Hub) Publish(evs []bullpen.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range evs {
		if ev.Seq > h.last {
			h.last = ev.Seq
		}
		h.send(ev)
	}
}

// PublishEphemeral delivers an event that is not stored (Seq 0), such as
// a token delta. Subscribers that cannot take it are cut off like any
// other slow subscriber.
func (h *Hub) PublishEphemeral(ev bullpen.Event) {
	ev.Seq = 0
	h.mu.Lock()
	defer h.mu.Unlock()
	h.send(ev)
}

func (h *Hub) send(ev bullpen.Event) {
	for s := range h.subs {
		select {
		case s.ch <- ev:
		default:
			close(s.ch)
			delete(h.subs, s)
		}
	}
}

// attach registers a subscriber and returns the highest sequence published
// before it: later events reach it live, earlier ones are in the store.
func (h *Hub) attach() (*hubSub, int64) {
	s := &hubSub{ch: make(chan bullpen.Event, h.buffer)}
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
		delete(h.subs, s)
		close(s.ch)
	}
}

// Last returns the highest published sequence.
func (h *Hub) Last() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}
