package sandboxes

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/store"
)

// Office event types. Each is visible to the sandbox's owner (and admins).
const (
	// EventCreated: a sandbox was created (payload: a StatePayload).
	EventCreated = "sandbox.created"
	// EventState: a sandbox changed state (started, paused, resumed,
	// stopped, terminated, timed out, re-adopted, crashed).
	EventState = "sandbox.state"
	// EventExecStarted and EventExecFinished bracket a command (payload:
	// an ExecPayload).
	EventExecStarted  = "sandbox.exec_started"
	EventExecFinished = "sandbox.exec_finished"
	// EventOutput is an ephemeral chunk of a command's output (payload: an
	// OutputPayload); never stored.
	EventOutput = "sandbox.output"
)

// StatePayload is the payload of EventCreated and EventState.
type StatePayload struct {
	ID      string `json:"id"`
	Name    string `json:"name,omitempty"`
	OwnerID int64  `json:"owner_id"`
	Image   string `json:"image,omitempty"`
	State   string `json:"state"`
	// Event is what happened: created, started, paused, resumed, stopped,
	// terminated, timed_out, adopted, crashed.
	Event string `json:"event"`
	// Detail: for timed_out, "timeout" or "idle".
	Detail string `json:"detail,omitempty"`
}

// ExecPayload is the payload of EventExecStarted and EventExecFinished.
type ExecPayload struct {
	ID         string `json:"id"`
	Name       string `json:"name,omitempty"`
	OwnerID    int64  `json:"owner_id"`
	ExecID     string `json:"exec_id"`
	Command    string `json:"command"`
	ByID       int64  `json:"by_id"` // the member who ran it
	ExitCode   *int   `json:"exit_code,omitempty"`
	Signal     string `json:"signal,omitempty"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	Error      string `json:"error,omitempty"`
	// Stdout and Stderr (finished only) are the head and tail of each
	// stream, kept so the exec history shows output after a reload;
	// StdoutBytes and StderrBytes are how much was written in all.
	Stdout      string `json:"stdout,omitempty"`
	Stderr      string `json:"stderr,omitempty"`
	StdoutBytes int64  `json:"stdout_bytes,omitempty"`
	StderrBytes int64  `json:"stderr_bytes,omitempty"`
	// OutputWithheld: the sandbox holds secrets, so no output is stored.
	OutputWithheld bool `json:"output_withheld,omitempty"`
}

// OutputPayload is one chunk of live output. Offset is where Data starts in
// its stream, so a client that also reads the exec stream can merge both
// without duplicates. Data is text when it is valid UTF-8, else DataB64.
type OutputPayload struct {
	ID        string `json:"id"`
	ExecID    string `json:"exec_id"`
	Stream    string `json:"stream"`
	Offset    int64  `json:"off"`
	Data      string `json:"data,omitempty"`
	DataB64   []byte `json:"data_b64,omitempty"`
	Truncated bool   `json:"truncated,omitempty"` // the live log stops here; the command goes on
}

// StateOf decodes a sandbox.created or sandbox.state event.
func StateOf(ev bullpen.Event) (StatePayload, error) {
	return bullpen.DecodePayload[StatePayload](ev, EventCreated, EventState)
}

// ExecOf decodes a sandbox.exec_started or sandbox.exec_finished event.
func ExecOf(ev bullpen.Event) (ExecPayload, error) {
	return bullpen.DecodePayload[ExecPayload](ev, EventExecStarted, EventExecFinished)
}

// OutputOf decodes a sandbox.output event.
func OutputOf(ev bullpen.Event) (OutputPayload, error) {
	return bullpen.DecodePayload[OutputPayload](ev, EventOutput)
}

// item is a queued event: a Manager event still to translate, or an office
// event ready to store.
type item struct {
	sb      *sandbox.Event
	typ     string
	owner   int64
	payload any
}

// queue is an unbounded FIFO: the Manager's OnEvent must never block, and
// nothing may be dropped.
type queue struct {
	mu     sync.Mutex
	items  []item
	wake   chan struct{}
	closed bool
	done   chan struct{}
	fresh  map[string]bool // sandboxes created, whose "started" is still to come
}

func newQueue() *queue {
	return &queue{wake: make(chan struct{}, 1), done: make(chan struct{}), fresh: map[string]bool{}}
}

func (q *queue) push(it item) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take waits for items; ok is false once the queue is closed and drained.
func (q *queue) take() (items []item, ok bool) {
	for {
		q.mu.Lock()
		items, q.items = q.items, nil
		closed := q.closed
		q.mu.Unlock()
		if len(items) > 0 {
			return items, true
		}
		if closed {
			return nil, false
		}
		<-q.wake
	}
}

// takeNow returns the queued items without waiting.
func (q *queue) takeNow() []item {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// onEvent is the Manager's OnEvent: it only queues. Exec events are left
// out: the Service writes its own, with the whole command and duration.
// Create's "started" right after "created" is left out too.
func (s *Service) onEvent(ev sandbox.Event) {
	switch ev.Type {
	case sandbox.EventExecStarted, sandbox.EventExecFinished:
		return
	case sandbox.EventCreated:
		s.q.mu.Lock()
		s.q.fresh[ev.SandboxID] = true
		s.q.mu.Unlock()
	case sandbox.EventStarted: // Create reports "started" right after "created": say it once
		s.q.mu.Lock()
		fresh := s.q.fresh[ev.SandboxID]
		delete(s.q.fresh, ev.SandboxID)
		s.q.mu.Unlock()
		if fresh {
			return
		}
	}
	s.q.push(item{sb: &ev})
}

// emit queues an office event, behind the Manager's events before it.
func (s *Service) emit(typ string, owner int64, payload any) {
	s.q.push(item{typ: typ, owner: owner, payload: payload})
}

// eventLinger is how long the writer lets events gather after the first
// of a batch: a short command's started and finished events (and a
// burst's creates) then share one transaction instead of one each, which
// cut the writer's CPU per warm run by about 40% (perf, A/B). Dashboards
// see them that much later; nobody waits on them.
const eventLinger = 5 * time.Millisecond

// writeEvents stores queued events, a batch per transaction, until Close.
func (s *Service) writeEvents() {
	defer close(s.q.done)
	for {
		items, ok := s.q.take()
		if !ok {
			return
		}
		time.Sleep(eventLinger)
		items = append(items, s.q.takeNow()...)
		for len(items) > 0 {
			n := min(len(items), 200)
			s.store(items[:n])
			items = items[n:]
		}
	}
}

func (s *Service) store(items []item) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range items {
		if items[i].sb != nil {
			items[i] = s.translate(ctx, *items[i].sb)
		}
	}
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
			for _, it := range items {
				if _, err := tx.Emit(it.typ, 0, audience(it.owner), it.payload); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			return
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
	s.log.Error("sandboxes: events not stored", "count", len(items), "err", err)
}

// stateOf maps a Manager event to the state the sandbox is in after it.
var stateOf = map[sandbox.EventType]sandbox.State{
	sandbox.EventCreated:    sandbox.StateRunning,
	sandbox.EventStarted:    sandbox.StateRunning,
	sandbox.EventResumed:    sandbox.StateRunning,
	sandbox.EventPaused:     sandbox.StatePaused,
	sandbox.EventStopped:    sandbox.StateStopped,
	sandbox.EventCrashed:    sandbox.StateStopped,
	sandbox.EventTerminated: sandbox.StateTerminated,
}

// translate turns a Manager event into an office event. The sandbox's
// current info (found by id even once terminated) gives owner and name.
func (s *Service) translate(ctx context.Context, ev sandbox.Event) item {
	p := StatePayload{ID: ev.SandboxID, Event: string(ev.Type), Detail: ev.Detail}
	in, err := s.m.Get(ctx, ev.SandboxID)
	if err == nil {
		p.Name, p.OwnerID, p.Image, p.State = bullpen.SandboxName(in.Name, in.Tags), bullpen.SandboxOwner(in.Tags), in.Image, string(in.State)
	}
	if st, ok := stateOf[ev.Type]; ok {
		p.State = string(st)
	}
	typ := EventState
	if ev.Type == sandbox.EventCreated {
		typ = EventCreated
	}
	return item{typ: typ, owner: p.OwnerID, payload: p}
}

// audience is who sees a sandbox's events: its owner and the admins. A
// sandbox without a known owner (0) is shown to admins only.
func audience(owner int64) []int64 { return []int64{owner} }

// publishOutput sends one live output chunk to the owner's dashboards.
func (s *Service) publishOutput(owner int64, p OutputPayload) {
	ev := bullpen.Event{Type: EventOutput, At: time.Now().UTC()}
	var err error
	if ev.Payload, err = json.Marshal(p); err != nil {
		return
	}
	ev.Audience = audience(owner)
	if ev.Encoded, err = json.Marshal(ev); err != nil {
		return
	}
	s.off.Hub().PublishEphemeral(ev)
}
