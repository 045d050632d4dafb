package web_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web"
)

// A busy client gets at most one frame per FrameInterval, each holding
// the events queued meanwhile, in order, none missing or doubled.
func TestWebsocketFramesPaced(t *testing.T) {
	const interval, posts = 40 * time.Millisecond, 40
	ts := newServer(t, web.Config{FrameInterval: interval})
	conn := ts.dial(ts.Token, "")
	defer conn.Close()
	start := time.Now()
	for i := 0; i < posts; i++ {
		if st := ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]string{"body": "tick"}, nil); st != http.StatusCreated {
			t.Fatalf("post %d: status %d", i, st)
		}
	}
	var seqs []int64
	frames := 0
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	for len(seqs) < posts {
		var f frame
		if err := conn.ReadJSON(&f); err != nil {
			t.Fatalf("read websocket after %d of %d events: %v", len(seqs), posts, err)
		}
		frames++
		for _, ev := range f.Events {
			if ev.Type == bullpen.EventMessagePosted {
				seqs = append(seqs, ev.Seq)
			}
		}
	}
	elapsed := time.Since(start)
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			t.Fatalf("event seqs %v: want consecutive, in order", seqs)
		}
	}
	// n frames, each at least an interval after the one before, all
	// written between the first post and the last read. (Posts slower
	// than the interval would each get a frame of their own, within it.)
	if limit := int(elapsed/interval) + 1; frames > limit {
		t.Errorf("%d events in %d frames over %v; want at most %d frames (one per %v)", posts, frames, elapsed, limit, interval)
	}
}

// With many event websockets open, a busy one's frames are spaced by
// feeds/FrameBudget rather than FrameInterval: the frames to all clients
// together stay within the budget, each holding more events, still in
// order, none missing or doubled.
func TestWebsocketFrameBudgetShared(t *testing.T) {
	const feeds, budget, posts = 4, 8, 40 // 4 feeds sharing 8 frames/s: one frame per 500 ms each
	interval := feeds * time.Second / budget
	ts := newServer(t, web.Config{FrameInterval: time.Millisecond, FrameBudget: budget})
	conn := ts.dial(ts.Token, "")
	defer conn.Close()
	for range feeds - 1 { // the others only need to be open
		c := ts.dial(ts.Token, "")
		defer c.Close()
	}
	time.Sleep(100 * time.Millisecond) // every handler counted
	start := time.Now()
	for i := 0; i < posts; i++ {
		if st := ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]string{"body": "tick"}, nil); st != http.StatusCreated {
			t.Fatalf("post %d: status %d", i, st)
		}
	}
	var seqs []int64
	frames := 0
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	for len(seqs) < posts {
		var f frame
		if err := conn.ReadJSON(&f); err != nil {
			t.Fatalf("read websocket after %d of %d events: %v", len(seqs), posts, err)
		}
		frames++
		for _, ev := range f.Events {
			if ev.Type == bullpen.EventMessagePosted {
				seqs = append(seqs, ev.Seq)
			}
		}
	}
	elapsed := time.Since(start)
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			t.Fatalf("event seqs %v: want consecutive, in order", seqs)
		}
	}
	if limit := int(elapsed/interval) + 1; frames > limit {
		t.Errorf("%d events in %d frames over %v; want at most %d frames (one per %v: %d feeds sharing %d frames/s)",
			posts, frames, elapsed, limit, interval, feeds, budget)
	}
}
