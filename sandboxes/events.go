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
	p := bullpen.SandboxStateEvent{ID: ev.SandboxID, Event: string(ev.Type), Detail: ev.Detail}
	in, err := s.m.Get(ctx, ev.SandboxID)
	if err == nil {
		p.Name, p.OwnerID, p.Image, p.State = bullpen.SandboxName(in.Name, in.Tags), bullpen.SandboxOwner(in.Tags), in.Image, string(in.State)
	}
	if st, ok := stateOf[ev.Type]; ok {
		p.State = string(st)
	}
	typ := bullpen.EventSandboxState
	if ev.Type == sandbox.EventCreated {
		typ = bullpen.EventSandboxCreated
	}
	return item{typ: typ, owner: p.OwnerID, payload: p}
}

// audience is who sees a sandbox's events: its owner and the admins. A
// sandbox without a known owner (0) is shown to admins only.
func audience(owner int64) []int64 { return []int64{owner} }

// publishOutput sends one live output chunk to the owner's dashboards.
func (s *Service) publishOutput(owner int64, p bullpen.SandboxOutputEvent) {
	ev := bullpen.Event{Type: bullpen.EventSandboxOutput, At: time.Now().UTC()}
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
