package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// waitTick is how often the live status of a waiting agent is refreshed.
const waitTick = time.Second

// modelCalls makes a turn's model calls: within the office-wide turn
// slots (sem, given back while the model is asked) and its provider's
// own share, with the waiting status, the stall notice, the streamed
// text and the call's record for the inspector.
type modelCalls struct {
	notifier
	hub interface {
		PublishEphemeral(ev bullpen.Event)
	}
	rec         ModelCallRecorder
	status      *statuses
	now         func() time.Time
	sem         chan struct{} // the office-wide turn slots, shared with the workers
	perProvider int           // model calls one provider kind may hold at once

	mu    sync.Mutex
	slots map[string]chan struct{} // provider kind → its model-call slots
}

// complete makes one model call for a turn. While the call is only waiting
// on the network, the turn's office-wide slot goes back to the pool and a
// slot of its provider's own share is held instead: a provider that hangs
// can fill its share, never the office. The agent's live status counts the
// wait, and a wait longer than the notice time is said in the channel.
func (m *modelCalls) complete(ctx context.Context, e *turnEnv, req llm.Request) (llm.Response, error) {
	release, err := m.modelSlot(ctx, e)
	if err != nil {
		return llm.Response{}, err
	}
	defer release()
	cctx, cancel := context.WithDeadline(llm.WithTimeouts(m.recording(ctx, e), llmTimeouts(e.timeouts)), e.deadline)
	defer cancel()
	w := m.watchWait(ctx, e)
	defer w.stop()
	return e.provider.Complete(cctx, req, func(text string) {
		w.answered()
		body, _ := json.Marshal(bullpen.DeltaEvent{TurnID: e.turn.ID, AgentID: e.agent.ID, Text: text})
		m.hub.PublishEphemeral(bullpen.Event{Type: bullpen.EventAgentDelta, ChannelID: e.channel.ID, Audience: e.aud,
			Payload: body, At: m.now().UTC()})
	})
}

// modelSlot swaps the caller's office-wide slot (held by its worker) for
// one of the provider's; the returned func swaps back. While every slot
// of the provider is taken, the agent's live status says it waits for
// one.
func (m *modelCalls) modelSlot(ctx context.Context, e *turnEnv) (func(), error) {
	m.mu.Lock()
	ps := m.slots[e.kind]
	if ps == nil {
		ps = make(chan struct{}, m.perProvider)
		m.slots[e.kind] = ps
	}
	m.mu.Unlock()
	<-m.sem
	select {
	case ps <- struct{}{}:
	default:
		st := bullpen.AgentStatus{State: bullpen.StatusWaiting, TurnID: e.turn.ID,
			Detail: fmt.Sprintf("waiting for a slot: provider %q runs %d calls at a time", e.providerName(), cap(ps))}
		m.status.setStatus(e.agent.ID, st)
		m.publishStatus(e, m.status.Status(e.agent.ID))
		select {
		case ps <- struct{}{}:
		case <-ctx.Done():
			m.sem <- struct{}{}
			return nil, ctx.Err()
		}
	}
	return func() {
		<-ps
		m.sem <- struct{}{} // never blocks for ever: holders of slots do not wait for one
	}, nil
}

// waiter shows a model call's wait: a live status with the seconds waited,
// and once per call a notice in the channel.
type waiter struct {
	s     *modelCalls
	e     *turnEnv
	start time.Time
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	got   bool      // the first delta arrived: no longer waiting
	last  time.Time // when the latest delta arrived
	wg    sync.WaitGroup
}

func (m *modelCalls) watchWait(ctx context.Context, e *turnEnv) *waiter {
	w := &waiter{s: m, e: e, start: m.now(), done: make(chan struct{})}
	w.publish(0)
	w.wg.Add(1)
	go func() { defer w.wg.Done(); w.run(ctx) }()
	return w
}

func (w *waiter) run(ctx context.Context) {
	tick := time.NewTicker(waitTick)
	defer tick.Stop()
	notice := time.NewTimer(time.Duration(w.e.timeouts.Notice))
	defer notice.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			w.publish(w.s.now().Sub(w.start))
		case <-notice.C:
			// Once per call: before the first text, or when a stream
			// that began has said nothing new for the notice time.
			quiet, began := w.quiet()
			if left := time.Duration(w.e.timeouts.Notice) - quiet; began && left > 0 {
				notice.Reset(left)
				continue
			}
			w.s.notice(ctx, w.e.agent, w.e.channel.ID, w.e.thread, w.noticeText(began))
		}
	}
}

func (w *waiter) noticeText(began bool) string {
	e := w.e
	model := e.role.Model
	if model == "" {
		model = "its default model"
	}
	if began {
		return fmt.Sprintf("@%s is still waiting for the model (%s, %s): its answer began, then nothing new came for %s. It stops waiting after %s of silence (idle timeout), and the turn ends by its %s deadline.",
			e.agent.Handle, e.providerName(), model, time.Duration(e.timeouts.Notice), time.Duration(e.timeouts.Idle), time.Duration(e.timeouts.Turn))
	}
	return fmt.Sprintf("@%s is still waiting for the model (%s, %s): no answer after %s. It stops waiting after %s without an answer (first-byte timeout), and the turn ends by its %s deadline.",
		e.agent.Handle, e.providerName(), model, time.Duration(e.timeouts.Notice), time.Duration(e.timeouts.FirstByte), time.Duration(e.timeouts.Turn))
}

// quiet is how long the model has said nothing: since the call began,
// or since its latest text once it began answering (began).
func (w *waiter) quiet() (time.Duration, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.got {
		return w.s.now().Sub(w.start), false
	}
	return w.s.now().Sub(w.last), true
}

// answered ends the wait at the first delta: the model is writing now.
// Every delta counts as news for the stall notice.
func (w *waiter) answered() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = w.s.now()
	if !w.got {
		w.got = true
		w.s.status.setStatus(w.e.agent.ID, bullpen.AgentStatus{State: bullpen.StatusThinking, TurnID: w.e.turn.ID})
		w.s.publishStatus(w.e, w.s.status.Status(w.e.agent.ID))
	}
}

func (w *waiter) stop() {
	w.once.Do(func() { close(w.done) })
	w.wg.Wait()
	w.answered() // done waiting either way
}

// publish sets and announces the waiting status, unless the model has
// begun to answer (checked under the lock answered takes, so a late tick
// never overwrites the newer status).
func (w *waiter) publish(waited time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.got {
		return
	}
	secs := int64(waited / time.Second)
	st := bullpen.AgentStatus{State: bullpen.StatusWaiting, TurnID: w.e.turn.ID, WaitedS: secs,
		Detail: fmt.Sprintf("waiting for the model, %d s", secs)}
	w.s.status.setStatus(w.e.agent.ID, st)
	w.s.publishStatus(w.e, w.s.status.Status(w.e.agent.ID))
}

// publishStatus sends an agent's live status as an ephemeral event: the
// dashboard's agent card shows it; it is not stored.
func (m *modelCalls) publishStatus(e *turnEnv, st bullpen.AgentStatus) {
	body, _ := json.Marshal(bullpen.AgentStatusEvent{AgentID: e.agent.ID, Handle: e.agent.Handle, Status: st})
	m.hub.PublishEphemeral(bullpen.Event{Type: bullpen.EventAgentStatus, ChannelID: e.channel.ID, Audience: e.aud,
		Payload: body, At: m.now().UTC()})
}

// recording returns ctx with the turn's recorder, so that what the
// provider sends and receives is stored with the turn for the inspector.
func (m *modelCalls) recording(ctx context.Context, e *turnEnv) context.Context {
	return llm.WithRecorder(ctx, turnRecorder{rec: m.rec, turnID: e.turn.ID, agentID: e.turn.AgentID, log: e.log})
}
