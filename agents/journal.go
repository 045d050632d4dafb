package agents

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// journal is a turn's record of its steps, shared by every run of the
// turn after a crash: they all have the same anchor wake (the oldest of
// the turn's wakes). Step keys:
//
//	w        the wakes of the first run          k      its work packet
//	m<s>     the model's answer at step s        p<s>   the answer posted as text
//	t<s>.<i> tool call i of step s: its outcome  s<key> a sandbox command started
//	a<id>    the approved call of approval id    n…     a notice posted
type journal struct {
	anchor  int64
	turnID  int64
	steps   map[string]store.Step
	resumed bool // an earlier run of this turn got as far as its start
}

// toolOutcome is what a tool call returned to the model.
type toolOutcome struct {
	Out   string `json:"out"`
	State string `json:"state"` // ok, error, approval
}

type wakesRecord struct {
	Wakes []int64 `json:"wakes"`
}

// interruptedExec is what the model is told of a sandbox command that was
// running when the server died: it is never run again unseen.
const interruptedExec = "error: the command was interrupted by a server restart; it may have partly run. It was not run again: check its effects before you retry it."

// interruptedCall closes tool calls left running by a dead process.
const interruptedCall = "interrupted: the server stopped during this call"

// A nil journal (a call from outside the built-in loop, such as the MCP
// endpoint's) has no steps and records none.
func (j *journal) has(key string) bool {
	if j == nil {
		return false
	}
	_, ok := j.steps[key]
	return ok
}

// get decodes a recorded step into v; false when there is none.
func (j *journal) get(key string, v any) bool {
	if j == nil {
		return false
	}
	st, ok := j.steps[key]
	return ok && json.Unmarshal([]byte(st.Payload), v) == nil
}

func (j *journal) step(key string, v any) store.Step {
	b, _ := json.Marshal(v)
	return store.Step{Anchor: j.anchor, TurnID: j.turnID, Key: key, Payload: string(b)}
}

// record stores a step in the transaction of its effect; a step already
// done makes the transaction, and so the effect, roll back.
func (j *journal) record(tx StepTx, key string, v any) error { return tx.RecordStep(j.step(key, v)) }

// stepNoter stores a step unless it exists; *store.Tx provides it.
type stepNoter interface {
	NoteStep(s store.Step) error
}

// note stores a step that has no effect of its own, unless it exists.
func (j *journal) note(tx stepNoter, key string, v any) error {
	if j == nil {
		return nil
	}
	return tx.NoteStep(j.step(key, v))
}

// notePacket journals the turn's work packet and, in the same
// transaction, the memory recalled into it: the entries' recall counts
// and the turn's recall rows for the inspector. A turn cut off before
// this recalls again when it resumes; one cut off after it reuses the
// packet, so a recall is recorded exactly once.
func (e *turnEnv) notePacket(tx *store.Tx, packet string) error {
	if err := e.j.note(tx, "k", packet); err != nil {
		return err
	}
	return tx.MarkRecalled(e.turn.ID, e.recalled)
}

// openJournal loads the journal of a turn's anchor wake. When an earlier
// run of the turn started, the turn resumes with that run's wakes: wakes
// claimed on top go back to pending for a turn of their own.
func (s *turnLoop) openJournal(ctx context.Context, e *turnEnv, wakes []bullpen.Wake) ([]bullpen.Wake, error) {
	anchor := anchorOf(wakes)
	steps, err := s.db.Steps(ctx, anchor)
	if err != nil {
		return nil, err
	}
	e.j = &journal{anchor: anchor, turnID: e.turn.ID, steps: steps}
	var rec wakesRecord
	if !e.j.get("w", &rec) {
		return wakes, nil
	}
	e.j.resumed = true
	var keep []bullpen.Wake
	var extra []int64
	for _, w := range wakes {
		if slices.Contains(rec.Wakes, w.ID) {
			keep = append(keep, w)
		} else {
			extra = append(extra, w.ID)
		}
	}
	_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
		if err := tx.ReleaseWakes(e.turn.ID, extra); err != nil {
			return err
		}
		return tx.InterruptToolCalls(e.turn.AgentID, interruptedCall)
	})
	e.log.Info("resuming an interrupted turn from its journal", "steps", len(steps), "released_wakes", len(extra))
	return keep, err
}

// noticeOnce posts a system notice as the agent unless this turn (in any
// run) already posted the one named key.
func (s *turnLoop) noticeOnce(ctx context.Context, e *turnEnv, key, text string) {
	if e.j == nil {
		s.notice(ctx, e.agent, e.channel.ID, e.thread, text)
		return
	}
	if e.j.has(key) {
		return
	}
	err := s.retryWrite(ctx, e, "notice", func() error {
		_, err := s.off.PostWith(ctx, e.agent, bullpen.PostInput{ChannelID: e.channel.ID, ThreadID: e.thread,
			Body: "⚠️ " + text, Source: bullpen.SourceSystem, TurnID: e.turn.ID}, func(tx *store.Tx, _ bullpen.Message) error {
			return e.j.record(tx, key, struct{}{})
		})
		return err
	})
	if err != nil && ctx.Err() == nil && !bullpen.IsCode(err, bullpen.ECONFLICT) {
		e.log.Error("agents: post notice", "err", err)
	}
}

// recorder returns how the running tool call's outcome is recorded in
// the transaction of its effect, or nil outside a journaled call.
func (e *turnEnv) recorder() func(tx StepTx, o toolOutcome) error {
	if e.j == nil || e.callKey == "" {
		return nil
	}
	j, key := e.j, e.callKey
	return func(tx StepTx, o toolOutcome) error { return j.record(tx, key, o) }
}
