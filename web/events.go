package web

import (
	"context"
	"net/url"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/live"
	"github.com/gofiber/contrib/websocket"
	"github.com/gofiber/fiber/v2"
)

// OfficeEvents is what the event feeds, the dashboard and the health check call.
type OfficeEvents interface {
	Hub() *live.Hub
	Subscribe(since int64) *live.Feed
	Ping(ctx context.Context) error
}

const localSince = "since"

// maxFrame bounds the events in one websocket frame.
const maxFrame = 1000

// An idle client keeps its frame buffers up to these sizes; larger ones
// are let go when it goes idle, so that memory per idle subscriber stays
// small after a burst.
const (
	maxIdleFrameBytes  = 32 << 10
	maxIdleFrameEvents = 64
)

// frameBufs are one event websocket's frame buffers. A busy client keeps
// them from frame to frame, however large: at 300 busy clients a frame is
// about 30 KiB, and growing it anew for every frame cost the server more
// CPU than writing it. A client that goes idle lets the large ones go.
type frameBufs struct {
	buf []byte          // the encoded frame
	evs []bullpen.Event // its events
}

// idle lets go of the buffers larger than an idle client keeps.
func (b *frameBufs) idle() {
	if cap(b.buf) > maxIdleFrameBytes {
		b.buf = nil
	}
	if cap(b.evs) > maxIdleFrameEvents {
		b.evs = nil
	}
}

// encodeFrame appends the websocket frame {"events":[...]} holding the
// events that me may see, and returns it with their count. Events carry
// their encoding from the writer, so fan-out does not re-encode them.
func encodeFrame(buf []byte, evs []bullpen.Event, me bullpen.Member) ([]byte, int) {
	buf = append(buf, `{"events":[`...)
	n := 0
	for i := range evs {
		if !evs[i].VisibleTo(me.ID, me.IsAdmin) {
			continue
		}
		raw, err := evs[i].JSON()
		if err != nil {
			continue // a payload that cannot encode was never stored
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, raw...)
		n++
	}
	return append(buf, "]}"...), n
}

// websocketUpgrade checks the request before the upgrade: a websocket
// handshake, a valid since, and, for cookie sessions, a same-origin page
// (browsers do not apply CSRF rules to websockets).
func (s *Server) websocketUpgrade(c *fiber.Ctx) error {
	if !websocket.IsWebSocketUpgrade(c) {
		return fiber.NewError(fiber.StatusUpgradeRequired, "this endpoint speaks websocket only")
	}
	since, err := intQuery(c, "since", -1)
	if err != nil {
		return err
	}
	if since < 0 {
		if c.Query("since") != "" {
			return bullpen.Errorf(bullpen.EINVALID, "since must not be negative")
		}
		since = s.off.Hub().Last() // live events only
	}
	if by, _ := c.Locals(localByCookie).(bool); by {
		u, err := url.Parse(c.Get(fiber.HeaderOrigin))
		if err != nil || u.Host != c.Hostname() {
			return bullpen.Errorf(bullpen.EFORBIDDEN, "websocket origin %q is not this site", c.Get(fiber.HeaderOrigin))
		}
		if s.cfg.OnWatch != nil {
			s.cfg.OnWatch() // someone is watching the dashboard
		}
	}
	c.Locals(localSince, since)
	return c.Next()
}

// frameInterval is the least time between two frames to one busy event
// websocket: FrameInterval, or longer when that many open feeds would
// together write more than FrameBudget frames a second.
func (s *Server) frameInterval() time.Duration {
	d := max(s.cfg.FrameInterval, 0)
	if s.cfg.FrameBudget > 0 {
		d = max(d, time.Duration(s.feeds.Load())*time.Second/time.Duration(s.cfg.FrameBudget))
	}
	return d
}

// nextFrame puts the events of the next frame in b.evs, reusing it: at
// most one frame per frameInterval to a busy client, and a quiet client's
// first event after FrameLinger. It paces before it looks, so that
// while a frame's interval runs, publishes queue in the hub without
// waking the writer: one wake-up per frame, not one per publish. Before
// it waits for a quiet feed, b lets its large buffers go.
func (s *Server) nextFrame(ctx context.Context, feed *live.Feed, b *frameBufs, lastWrite time.Time) error {
	if wait := s.frameInterval() - time.Since(lastWrite); wait > 0 {
		time.Sleep(wait)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.evs = feed.More(b.evs[:0], maxFrame); len(b.evs) > 0 {
		return nil // queued for a while already: no need to linger
	}
	b.idle()
	evs, err := feed.Next(ctx, maxFrame)
	if err != nil {
		return err
	}
	if s.cfg.FrameLinger > 0 && len(evs) < maxFrame {
		// Let a feed that just woke fill the frame: one write for many events.
		time.Sleep(s.cfg.FrameLinger)
		evs = feed.More(evs, maxFrame)
	}
	b.evs = evs
	return nil
}

// websocket streams the events the member may see, from since on, with a
// heartbeat. It ends when the client goes away or the server shuts down,
// which it announces with a going-away close frame.
func (s *Server) websocket() fiber.Handler {
	return websocket.New(func(conn *websocket.Conn) {
		defer s.trackWebsocket()()
		s.feeds.Add(1)
		defer s.feeds.Add(-1)
		me, _ := conn.Locals(localMember).(bullpen.Member)
		since, _ := conn.Locals(localSince).(int64)
		wc := conn.Conn // the pooled wrapper is reset when this returns

		ctx, cancel := context.WithCancel(s.ctx)
		defer cancel()
		hb := s.cfg.HeartbeatInterval
		readerDone := make(chan struct{})
		wc.SetReadLimit(4096)
		wc.SetReadDeadline(time.Now().Add(2 * hb))
		wc.SetPongHandler(func(string) error { return wc.SetReadDeadline(time.Now().Add(2 * hb)) })
		go func() { // reads only to see pongs and the client's close
			defer close(readerDone)
			defer cancel()
			for {
				if _, _, err := wc.ReadMessage(); err != nil {
					return
				}
			}
		}()
		pingerDone := make(chan struct{})
		go func() {
			defer close(pingerDone)
			t := time.NewTicker(hb)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					wc.WriteControl(websocket.PingMessage, nil, time.Now().Add(5*time.Second))
				}
			}
		}()

		feed := s.off.Subscribe(since)
		defer feed.Close()
		var fb frameBufs
		var lastWrite time.Time
		for {
			if err := s.nextFrame(ctx, feed, &fb, lastWrite); err != nil {
				break
			}
			var n int
			if fb.buf, n = encodeFrame(fb.buf[:0], fb.evs, me); n == 0 {
				continue
			}
			wc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if err := wc.WriteMessage(websocket.TextMessage, fb.buf); err != nil {
				break
			}
			lastWrite = time.Now()
		}
		if s.ctx.Err() != nil {
			msg := websocket.FormatCloseMessage(websocket.CloseGoingAway, "server shutting down")
			wc.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		}
		cancel()
		<-pingerDone // no goroutine may touch the connection once this returns
		// Closing a hijacked fasthttp connection is a no-op until this
		// handler returns, so wake the reader with an expired deadline.
		wc.SetReadDeadline(time.Now())
		<-readerDone
	})
}
