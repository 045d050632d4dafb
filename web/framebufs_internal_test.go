package web

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/live"
)

// A busy client's frame buffers stay from frame to frame, however large
// (a frame to each of 300 busy clients is about 30 KiB: growing it anew
// for each frame was the fan-out's largest cost after the writes), and a
// client that goes idle lets the large ones go.
func TestFrameBuffersStayWhileBusyGoWhenIdle(t *testing.T) {
	hub := live.NewHub(0, 0)
	feed := live.NewFeed(hub, nil, 0)
	defer feed.Close()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := feed.Next(gone, maxFrame); !errors.Is(err, context.Canceled) { // attaches the feed
		t.Fatalf("Next on a quiet feed = %v, want context.Canceled", err)
	}
	seq := int64(0)
	publish := func(n int) { // n events of about 300 bytes each
		evs := make([]bullpen.Event, n)
		for i := range evs {
			seq++
			evs[i] = bullpen.Event{Seq: seq, Type: "message.created",
				Encoded: fmt.Appendf(nil, `{"seq":%d,"payload":"%0290d"}`, seq, 0)}
		}
		hub.Publish(evs)
	}
	s := &Server{cfg: Config{FrameInterval: -1, FrameBudget: -1}}
	var fb frameBufs
	frame := func() {
		t.Helper()
		if err := s.nextFrame(context.Background(), feed, &fb, time.Time{}); err != nil {
			t.Fatalf("nextFrame: %v", err)
		}
		fb.buf, _ = encodeFrame(fb.buf[:0], fb.evs, bullpen.Member{IsAdmin: true})
	}
	publish(200)
	frame()
	if len(fb.evs) != 200 || cap(fb.buf) <= maxIdleFrameBytes || cap(fb.evs) <= maxIdleFrameEvents {
		t.Fatalf("first frame: %d events, buffers of %d bytes and %d events; want 200 events, more than %d bytes and %d events",
			len(fb.evs), cap(fb.buf), cap(fb.evs), maxIdleFrameBytes, maxIdleFrameEvents)
	}
	buf0, evs0 := &fb.buf[:1][0], &fb.evs[:1][0]
	publish(150)
	frame()
	if len(fb.evs) != 150 || fb.evs[0].Seq != 201 {
		t.Fatalf("second frame: %d events from seq %d, want 150 from 201", len(fb.evs), fb.evs[0].Seq)
	}
	if &fb.buf[:1][0] != buf0 || &fb.evs[:1][0] != evs0 {
		t.Errorf("a busy client's second frame got new buffers, want the first frame's")
	}
	quiet, stop := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer stop()
	if err := s.nextFrame(quiet, feed, &fb, time.Time{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("nextFrame on a quiet feed = %v, want context.DeadlineExceeded", err)
	}
	if fb.buf != nil || fb.evs != nil {
		t.Errorf("an idle client holds buffers of %d bytes and %d events, want none over %d and %d",
			cap(fb.buf), cap(fb.evs), maxIdleFrameBytes, maxIdleFrameEvents)
	}
}
