package office_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/live"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// collect reads from a feed until it has n stored events.
func collect(t *testing.T, f *live.Feed, n int) []bullpen.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []bullpen.Event
	for len(out) < n {
		evs, err := f.Next(ctx, 100)
		if err != nil {
			t.Fatalf("Feed.Next after %d of %d events: %v", len(out), n, err)
		}
		out = append(out, evs...)
	}
	return out
}

// checkSeqs fails unless evs are exactly the sequences from..from+len-1.
func checkSeqs(t *testing.T, evs []bullpen.Event, from int64) {
	t.Helper()
	for i, ev := range evs {
		if ev.Seq != from+int64(i) {
			t.Fatalf("event %d has seq %d, want %d (gap or duplicate)", i, ev.Seq, from+int64(i))
		}
	}
}

func TestFeedReplaysThenGoesLive(t *testing.T) {
	f := newFixture(t, storetest.Config(t, store.SQLite))
	start := f.off.Hub().Last()
	for i := 0; i < 50; i++ {
		mustPost(t, f.off, f.ada, f.general.ID, fmt.Sprintf("before %d", i))
	}
	feed := f.off.Subscribe(start)
	defer feed.Close()
	got := collect(t, feed, 50)
	go func() {
		for i := 0; i < 50; i++ {
			mustPost(t, f.off, f.ada, f.general.ID, fmt.Sprintf("after %d", i))
		}
	}()
	got = append(got, collect(t, feed, 50)...)
	checkSeqs(t, got, start+1)
	if len(got) != 100 {
		t.Errorf("got %d events, want 100", len(got))
	}
}

// A subscriber with a tiny buffer falls behind many concurrent writers; it
// is cut off, resumes from the store, and still sees every event once.
func TestFeedSlowSubscriberResumesWithoutLoss(t *testing.T) {
	f := newFixture(t, storetest.Config(t, store.SQLite))
	// A second office on the same store, whose hub becomes the publisher.
	off, err := office.New(context.Background(), f.db, office.Config{HubBuffer: 4})
	if err != nil {
		t.Fatal(err)
	}
	start := off.Hub().Last()
	mustPost(t, off, f.ada, f.general.ID, "first")
	feed := off.Subscribe(start)
	defer feed.Close()
	got := collect(t, feed, 1) // attached to the hub from here on
	const writers, each = 4, 100
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				mustPost(t, off, f.ada, f.general.ID, fmt.Sprintf("w%d-%d", w, i))
			}
		}(w)
	}
	wg.Wait() // 400 events behind a buffer of 4: the hub must cut the feed off
	got = append(got, collect(t, feed, writers*each+1-len(got))...)
	checkSeqs(t, got, start+1)
	if feed.Resumes() == 0 {
		t.Errorf("the slow feed was never cut off; the test did not exercise resuming")
	}
}

func TestFeedEphemeralAndCancel(t *testing.T) {
	f := newFixture(t, storetest.Config(t, store.SQLite))
	feed := f.off.Subscribe(f.off.Hub().Last())
	defer feed.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(20 * time.Millisecond)
		f.off.Hub().PublishEphemeral(bullpen.Event{Seq: 99, Type: "agent.delta"})
	}()
	evs, err := feed.Next(ctx, 10)
	if err != nil || len(evs) != 1 || evs[0].Seq != 0 || evs[0].Type != "agent.delta" {
		t.Fatalf("Next = %+v, %v; want one ephemeral event with seq 0", evs, err)
	}
	cancel()
	if _, err := feed.Next(ctx, 10); err != context.Canceled {
		t.Errorf("Next after cancel = %v, want context.Canceled", err)
	}
}
