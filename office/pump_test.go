package office

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// tableReader is an events table that another replica appends to.
type tableReader struct {
	mu  sync.Mutex
	evs []bullpen.Event
}

func (r *tableReader) add(seqs ...int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range seqs {
		r.evs = append(r.evs, bullpen.Event{Seq: s, Type: "test"})
	}
}

func (r *tableReader) EventsAfter(_ context.Context, since int64, limit int) ([]bullpen.Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []bullpen.Event
	slices.SortFunc(r.evs, func(a, b bullpen.Event) int { return int(a.Seq - b.Seq) })
	for _, ev := range r.evs {
		if ev.Seq > since && len(out) < limit {
			out = append(out, ev)
		}
	}
	return out, nil
}

// recHub is a hub that records what is published to it.
type recHub struct {
	last int64
	got  []int64 // not yet drained by received
}

func (h *recHub) Publish(evs []bullpen.Event) {
	for _, ev := range evs {
		h.last = max(h.last, ev.Seq)
		h.got = append(h.got, ev.Seq)
	}
}

func (h *recHub) Last() int64 { return h.last }

// received drains what the hub has been sent.
func received(h *recHub) []int64 {
	out := h.got
	h.got = nil
	return out
}

// The pump interleaves this process's commits with another replica's, in
// sequence order: a local commit that is not next waits for the table,
// and a hole (a commit not visible yet) holds back what follows it.
func TestPumpOrdersLocalAndRemoteEvents(t *testing.T) {
	hub := &recHub{}
	table := &tableReader{}
	p := newPump(hub, table, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()

	table.add(1)
	p.local([]bullpen.Event{{Seq: 1}}) // next in order: published at once
	if got := received(hub); !slices.Equal(got, []int64{1}) {
		t.Fatalf("after a local commit: %v, want [1]", got)
	}
	table.add(2) // the other replica's
	table.add(3)
	p.local([]bullpen.Event{{Seq: 3}}) // ours, but 2 comes first
	if got := received(hub); len(got) != 0 {
		t.Fatalf("a local commit after a remote one was published before it: %v", got)
	}
	p.drain(ctx)
	if got := received(hub); !slices.Equal(got, []int64{2, 3}) {
		t.Fatalf("after reading the table: %v, want [2 3]", got)
	}
	table.add(5) // 4 is not visible yet
	if p.drain(ctx) {
		t.Fatal("drain passed over a hole at once")
	}
	if got := received(hub); len(got) != 0 {
		t.Fatalf("published past a hole: %v", got)
	}
	table.add(4)
	if !p.drain(ctx) {
		t.Fatal("drain still stuck once the hole filled")
	}
	if got := received(hub); !slices.Equal(got, []int64{4, 5}) {
		t.Fatalf("after the hole filled: %v, want [4 5]", got)
	}
	p.drain(ctx)
	if got := received(hub); len(got) != 0 {
		t.Fatalf("events published twice: %v", got)
	}
}

// A hole that never fills (rows removed by hand) is passed over after a
// while, so the hub does not stall for good.
func TestPumpPassesOverAPermanentHole(t *testing.T) {
	hub := &recHub{}
	table := &tableReader{}
	table.add(1, 3)
	p := newPump(hub, table, slog.New(slog.NewTextHandler(io.Discard, nil)))
	p.drain(context.Background())
	p.gapSince = time.Now().Add(-gapPatience) // the hole has lasted long enough
	p.drain(context.Background())
	if got := received(hub); !slices.Equal(got, []int64{1, 3}) {
		t.Fatalf("got %v, want [1 3]", got)
	}
}
