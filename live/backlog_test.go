package live

import (
	"context"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// A subscriber's backlog is bounded in bytes too: one that lags by more
// encoded bytes than the limit is cut off, though its event count is far
// under the buffer, and its feed resumes from the store with every event
// once, in order.
func TestHubCutsOffByBytes(t *testing.T) {
	var all memEvents
	for s := int64(1); s <= 12; s++ {
		all = append(all, bullpen.Event{Seq: s, Type: "test", Encoded: []byte(`"` + strings.Repeat("x", 298) + `"`)})
	}
	h := NewHub(0, 1000)
	h.LimitBytes(1000)
	f := NewFeed(h, all, 0)
	defer f.Close()
	f.sub, f.storedTo = h.attach()
	h.Publish(all[0:1])
	h.Publish(all[1:2])
	h.Publish(all[2:3])
	if len(h.subs) != 1 {
		t.Fatalf("cut off at 903 bytes of backlog, under the 1000 allowed")
	}
	h.Publish(all[3:4])
	if len(h.subs) != 0 {
		t.Fatalf("a subscriber 1,204 bytes behind (limit 1,000, 4 events of 1,000 allowed) was not cut off")
	}
	h.Publish(all[4:12])
	var got []int64
	for len(got) < 12 {
		evs, err := f.Next(context.Background(), 5)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			got = append(got, ev.Seq)
		}
	}
	for i, s := range got {
		if s != int64(i+1) {
			t.Fatalf("feed after the cut-off read %v, want 1..12 once in order", got)
		}
	}
	if f.Resumes() != 1 {
		t.Errorf("resumes = %d, want 1", f.Resumes())
	}
}
