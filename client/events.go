package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/gorilla/websocket"
)

// Events returns up to limit stored events after seq since that the
// caller may see, oldest first.
func (c *Client) Events(ctx context.Context, since int64, limit int) ([]bullpen.Event, error) {
	q := url.Values{"since": {strconv.FormatInt(since, 10)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return list[bullpen.Event](ctx, c, "/events", q)
}

// Feed is a live event subscription over the websocket (/api/v1/ws).
// Next returns events in order; when the connection drops (the server
// restarts, the network blinks) Feed reconnects from the last sequence it
// returned, so the caller sees every stored event once, with no gap.
// Ephemeral events (Seq 0: live sandbox output, agents' streamed text)
// are returned as they come; those sent while the feed was disconnected
// are lost, as they are for the dashboard.
type Feed struct {
	c       *Client
	last    int64
	conn    *websocket.Conn
	pending []bullpen.Event
	// Backoff bounds the wait between reconnects (default 100 ms to 5 s).
	MinBackoff, MaxBackoff time.Duration
	// OnReconnect, when set, is told of each reconnect attempt's error.
	OnReconnect func(err error)
}

// Subscribe connects a feed of the events after seq since (0: from the
// first stored event; -1: only events from now on, that is from this
// call). With -1, a connection lost before the first event resumes from
// the reconnect: pass a sequence number to miss nothing.
func (c *Client) Subscribe(ctx context.Context, since int64) (*Feed, error) {
	f := &Feed{c: c, last: since, MinBackoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second}
	if err := f.dial(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// Last returns the sequence number of the last event Next returned (the
// point to resume from).
func (f *Feed) Last() int64 { return f.last }

// Next returns the next event, reconnecting as needed, until ctx ends.
// Errors that reconnecting cannot fix (a bad token) are returned.
func (f *Feed) Next(ctx context.Context) (bullpen.Event, error) {
	backoff := f.MinBackoff
	for len(f.pending) == 0 {
		if f.conn == nil {
			if err := f.dial(ctx); err != nil {
				if s := StatusOf(err); s >= 400 && s < 500 && s != http.StatusTooManyRequests {
					return bullpen.Event{}, err
				}
				if f.OnReconnect != nil {
					f.OnReconnect(err)
				}
				select {
				case <-ctx.Done():
					return bullpen.Event{}, ctx.Err()
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, f.MaxBackoff)
				continue
			}
			backoff = f.MinBackoff
		}
		if err := f.read(ctx); err != nil {
			f.Close()
			if ctx.Err() != nil {
				return bullpen.Event{}, ctx.Err()
			}
			if f.OnReconnect != nil {
				f.OnReconnect(err)
			}
		}
	}
	ev := f.pending[0]
	f.pending = f.pending[1:]
	if ev.Seq > 0 { // ephemeral events (live output, deltas) have none
		f.last = ev.Seq
	}
	return ev, nil
}

// Close closes the connection; a later Next reconnects.
func (f *Feed) Close() {
	if f.conn != nil {
		_ = f.conn.Close()
		f.conn = nil
	}
}

func (f *Feed) dial(ctx context.Context) error {
	u := *f.c.base
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
	u.Path = strings.TrimRight(u.Path, "/") + "/api/v1/ws"
	if f.last >= 0 {
		u.RawQuery = url.Values{"since": {strconv.FormatInt(f.last, 10)}}.Encode()
	}
	h := http.Header{}
	if f.c.token != "" {
		h.Set("Authorization", "Bearer "+f.c.token)
	}
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second, Proxy: http.ProxyFromEnvironment}
	conn, resp, err := d.DialContext(ctx, u.String(), h)
	if err != nil {
		if resp != nil && resp.StatusCode/100 != 1 && resp.StatusCode != 0 {
			defer resp.Body.Close()
			return decodeError(resp)
		}
		return fmt.Errorf("client: websocket: %w", err)
	}
	conn.SetReadLimit(64 << 20)
	f.conn = conn
	return nil
}

// read reads one frame ({"events": [...]}) into pending. The server pings
// every heartbeat; a read that sees nothing for long is a dead connection.
func (f *Feed) read(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { f.conn.SetReadDeadline(time.Now()) })
	defer stop()
	f.conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
	f.conn.SetPingHandler(func(data string) error {
		f.conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
		return f.conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(5*time.Second))
	})
	_, raw, err := f.conn.ReadMessage()
	if err != nil {
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return fmt.Errorf("client: websocket closed: %d %s", ce.Code, ce.Text)
		}
		return fmt.Errorf("client: websocket: %w", err)
	}
	var frame struct {
		Events []bullpen.Event `json:"events"`
	}
	if err := json.Unmarshal(raw, &frame); err != nil {
		return fmt.Errorf("client: websocket frame: %w", err)
	}
	for _, ev := range frame.Events {
		// A resumed feed never repeats a stored event it returned; an
		// ephemeral one (Seq 0) is never resent, so it always passes.
		if ev.Seq == 0 || ev.Seq > f.last {
			f.pending = append(f.pending, ev)
		}
	}
	return nil
}
