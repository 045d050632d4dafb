package live

import (
	"context"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// memEvents is a store of events in memory.
type memEvents []bullpen.Event

func (m memEvents) EventsAfter(_ context.Context, since int64, limit int) ([]bullpen.Event, error) {
	var out []bullpen.Event
	for _, ev := range m {
		if ev.Seq > since && len(out) < limit {
			out = append(out, ev)
		}
	}
	return out, nil
}

func seqRange(from, to int64) []bullpen.Event {
	var out []bullpen.Event
	for s := from; s <= to; s++ {
		out = append(out, bullpen.Event{Seq: s, Type: "test"})
	}
	return out
}

// Each publish reaches a subscriber as one batch. An idle subscriber
// takes a batch larger than its buffer; one that already lags and would
// exceed it is cut off, and its feed resumes from the store: every event
// once, in order, split into frames of at most max.
func TestHubBatchesAndCutsOff(t *testing.T) {
	all := memEvents(seqRange(1, 30))
	h := NewHub(0, 4)
	f := NewFeed(h, all, 0)
	defer f.Close()
	f.sub, f.storedTo = h.attach()

	h.Publish(all[:10]) // larger than the buffer, but the feed is idle
	if len(h.subs) != 1 || f.sub.queued.Load() != 10 {
		t.Fatalf("after a batch of 10: %d subscribers, %d queued; want 1, 10", len(h.subs), f.sub.queued.Load())
	}
	h.Publish(all[10:12]) // lagging 10 > 4: cut off
	if len(h.subs) != 0 {
		t.Fatalf("a subscriber lagging past its buffer was not cut off")
	}
	h.Publish(all[12:30])
	var got []int64
	for len(got) < 30 {
		evs, err := f.Next(context.Background(), 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) > 7 {
			t.Fatalf("Next(7) returned %d events", len(evs))
		}
		for _, ev := range evs {
			got = append(got, ev.Seq)
		}
	}
	for i, s := range got {
		if s != int64(i+1) {
			t.Fatalf("feed gave %v; want 1..30 once each, in order", got)
		}
	}
	if f.Resumes() != 1 {
		t.Errorf("Resumes = %d, want 1", f.Resumes())
	}
}

// A writer that asks for more events while its feed still catches up
// from the store gets none: the live ones queued meanwhile come after
// the stored ones, every event once, in order.
func TestMoreWaitsForCatchUp(t *testing.T) {
	all := memEvents(seqRange(1, 12))
	h := NewHub(10, 16) // 1..10 stored before the feed starts
	f := NewFeed(h, all, 0)
	defer f.Close()
	ctx := context.Background()
	evs, err := f.Next(ctx, 4) // the stored 1..4
	if err != nil {
		t.Fatal(err)
	}
	got := seqsOf(evs)
	h.Publish(all[10:12]) // 11, 12 live, while 5..10 are still to read
	if more := f.More(nil, 100); len(more) != 0 {
		t.Fatalf("More during catch-up = %v, want nothing before the stored 5..10", seqsOf(more))
	}
	for len(got) < 12 {
		evs, err := f.Next(ctx, 4)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, seqsOf(evs)...)
		got = append(got, seqsOf(f.More(nil, 100))...)
	}
	for i, s := range got {
		if s != int64(i+1) {
			t.Fatalf("events %v, want 1..12 once each, in order", got)
		}
	}
}

func seqsOf(evs []bullpen.Event) []int64 {
	var out []int64
	for _, ev := range evs {
		out = append(out, ev.Seq)
	}
	return out
}
