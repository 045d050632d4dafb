package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/gorilla/websocket"
)

// arrival is an event as the bench's websocket saw it, with when.
type arrival struct {
	ev bullpen.Event
	at time.Time
}

// watch is the admin's live event stream, ephemeral events included (the
// live sandbox output is one: the client package's feed skips those).
type watch struct {
	conn *websocket.Conn
	evs  chan arrival
	err  chan error
}

// openWatch connects to the websocket of the server at base, from now on.
func openWatch(ctx context.Context, base, token string) (*watch, error) {
	u := "ws" + strings.TrimPrefix(strings.TrimRight(base, "/"), "http") + "/api/v1/ws"
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, u, http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		return nil, fmt.Errorf("websocket: %w", err)
	}
	w := &watch{conn: conn, evs: make(chan arrival, 4096), err: make(chan error, 1)}
	go w.read()
	return w, nil
}

func (w *watch) read() {
	for {
		_, raw, err := w.conn.ReadMessage()
		at := time.Now()
		if err != nil {
			w.err <- err
			close(w.evs)
			return
		}
		var frame struct {
			Events []bullpen.Event `json:"events"`
		}
		if json.Unmarshal(raw, &frame) != nil {
			continue
		}
		for _, ev := range frame.Events {
			w.evs <- arrival{ev: ev, at: at}
		}
	}
}

func (w *watch) Close() { w.conn.Close() }

// untilTurnEnd collects events until the turn of agentID ends (finished,
// failed or abandoned), or timeout.
func (w *watch) untilTurnEnd(agentID int64, timeout time.Duration) ([]arrival, error) {
	var got []arrival
	deadline := time.After(timeout)
	for {
		select {
		case a, ok := <-w.evs:
			if !ok {
				return got, fmt.Errorf("websocket: %v", <-w.err)
			}
			got = append(got, a)
			if t, ok := turnOf(a.ev); ok && t.AgentID == agentID && t.ended {
				if t.Error != "" {
					return got, fmt.Errorf("turn of agent %d: %s", agentID, t.Error)
				}
				return got, nil
			}
		case <-deadline:
			return got, fmt.Errorf("agent %d: no end of turn in %s", agentID, timeout)
		}
	}
}

// turnEvent is the part of an agent.turn_* payload the bench reads.
type turnEvent struct {
	AgentID int64  `json:"agent_id"`
	Error   string `json:"error"`
	ended   bool
}

func turnOf(ev bullpen.Event) (turnEvent, bool) {
	var t turnEvent
	if !strings.HasPrefix(ev.Type, "agent.turn_") || json.Unmarshal(ev.Payload, &t) != nil {
		return t, false
	}
	t.ended = ev.Type != "agent.turn_started"
	return t, true
}

// output is the part of a sandbox.output payload the bench reads.
type output struct {
	ID   string `json:"id"`
	Data string `json:"data"`
}

// firstOutput finds the first live output of sandbox id containing want.
func firstOutput(got []arrival, id, want string) (arrival, bool) {
	for _, a := range got {
		var o output
		if a.ev.Type == "sandbox.output" && json.Unmarshal(a.ev.Payload, &o) == nil && o.ID == id && strings.Contains(o.Data, want) {
			return a, true
		}
	}
	return arrival{}, false
}

// firstOf finds the first event of a type (with a payload field check).
func firstOf(got []arrival, typ string, match func(json.RawMessage) bool) (arrival, bool) {
	for _, a := range got {
		if a.ev.Type == typ && (match == nil || match(a.ev.Payload)) {
			return a, true
		}
	}
	return arrival{}, false
}
