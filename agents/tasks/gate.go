package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Review answers a submission: approving makes the task done; requesting
// changes (a note is required) sends it back to in_progress and tells the
// owner in the thread, which wakes an agent. The pending approval that
// asked for the review, if any, is answered with it, so the dashboard's
// approvals panel and Telegram's buttons see it answered.
func (s *Service) Review(ctx context.Context, actor bullpen.Member, id int64, approve bool, note string) (bullpen.Task, error) {
	if err := checkReview(approve, note); err != nil {
		return bullpen.Task{}, err
	}
	return s.change(ctx, id, nil, func(tx *store.Tx, t *bullpen.Task, c bullpen.Channel) error {
		if t.ApprovalID != 0 {
			if err := s.answerApproval(tx, actor, *t, c, approve, note); err != nil {
				return err
			}
		}
		return s.review(tx, actor, t, c, approve, note)
	})
}

// ReviewApproved applies, in the transaction that answers it, a human's
// answer to the approval that asked for task review (the approvals
// panel, Telegram's buttons): the answer becomes the review.
func (s *Service) ReviewApproved(tx *store.Tx, actor bullpen.Member, a bullpen.Approval) error {
	var args struct {
		TaskID int64 `json:"task_id"`
	}
	if err := json.Unmarshal([]byte(a.Arguments), &args); err != nil {
		return fmt.Errorf("tasks: review approval %d: %w", a.ID, err)
	}
	approve := a.State == bullpen.ApprovalApproved
	note := a.Note
	if !approve && strings.TrimSpace(note) == "" {
		note = "changes requested (no note given)"
	}
	if err := checkReview(approve, note); err != nil {
		return err
	}
	t, err := tx.Task(args.TaskID)
	if err != nil {
		return err
	}
	if t.ApprovalID != a.ID {
		return bullpen.Errorf(bullpen.ECONFLICT, "task %d no longer waits on approval %d", t.ID, a.ID)
	}
	c, err := s.db.Channel(tx.Context(), t.ChannelID)
	if err != nil {
		return fmt.Errorf("tasks: channel of task %d: %w", t.ID, err)
	}
	return s.review(tx, actor, &t, c, approve, note)
}

func checkReview(approve bool, note string) error {
	if err := bullpen.ValidateTaskNote(note); err != nil {
		return err
	}
	if !approve && strings.TrimSpace(note) == "" {
		return bullpen.Errorf(bullpen.EINVALID, "requesting changes needs a note saying what to change")
	}
	return nil
}

// askApproval stores the approval that asks a person to review t,
// submitted by its owner in turn turnID, and remembers it on t.
func (s *Service) askApproval(tx *store.Tx, owner bullpen.Member, t *bullpen.Task, c bullpen.Channel, turnID int64) error {
	raw, _ := json.Marshal(map[string]any{"task_id": t.ID, "title": t.Title})
	a, err := tx.CreateApproval(bullpen.Approval{AgentID: owner.ID, TurnID: turnID, ChannelID: c.ID, ThreadID: t.ThreadID,
		Tool: bullpen.ApprovalTaskReview, Arguments: string(raw), Reason: fmt.Sprintf("review of task %d: %s", t.ID, t.Title)})
	if err != nil {
		return err
	}
	t.ApprovalID = a.ID
	if _, err := tx.Emit(bullpen.EventApprovalRequested, c.ID, audienceOf(c), bullpen.ApprovalEvent{Approval: a, Handle: owner.Handle}); err != nil {
		return err
	}
	return nil
}

// answerApproval answers t's pending approval as the review does.
func (s *Service) answerApproval(tx *store.Tx, actor bullpen.Member, t bullpen.Task, c bullpen.Channel, approve bool, note string) error {
	state := bullpen.ApprovalDenied
	if approve {
		state = bullpen.ApprovalApproved
	}
	a, err := tx.AnswerApproval(t.ApprovalID, state, actor.ID, note)
	if err != nil {
		return err
	}
	_, owner, err := s.channelAndMember(tx, c.ID, a.AgentID)
	if err != nil {
		return err
	}
	_, err = tx.Emit(bullpen.EventApprovalAnswered, c.ID, audienceOf(c), bullpen.ApprovalEvent{Approval: a, Handle: owner.Handle})
	return err
}

// review applies an answer to t, which must be in review.
func (s *Service) review(tx *store.Tx, actor bullpen.Member, t *bullpen.Task, c bullpen.Channel, approve bool, note string) error {
	if t.State != bullpen.TaskInReview {
		return bullpen.Errorf(bullpen.EINVALID, "task %d is %s, not in review", t.ID, t.State)
	}
	if err := mayReview(actor, *t); err != nil {
		return err
	}
	from := t.State
	ev := bullpen.TaskEvent{ByID: actor.ID, From: from, Note: note, Reason: "approved"}
	if approve {
		now := tx.Now()
		t.State, t.ClosedAt, t.ApprovalID = bullpen.TaskDone, &now, 0
		if err := s.save(tx, t, c, bullpen.EventTaskReviewed, ev); err != nil {
			return err
		}
		if note != "" {
			if err := s.say(tx, actor, *t, c, note); err != nil {
				return err
			}
		}
		return s.after(tx, actor, *t, from)
	}
	t.State, t.ApprovalID, ev.Reason = bullpen.TaskInProgress, 0, "changes requested"
	owner := "The owner"
	if t.OwnerID == 0 {
		t.State = bullpen.TaskOpen
	} else {
		_, m, err := s.channelAndMember(tx, t.ChannelID, t.OwnerID)
		if err != nil {
			return err
		}
		owner, t.LeaseUntil = "@"+m.Handle, s.lease(m)
	}
	if err := s.save(tx, t, c, bullpen.EventTaskReviewed, ev); err != nil {
		return err
	}
	return s.say(tx, actor, *t, c, fmt.Sprintf("%s: changes requested on task %d: %s", owner, t.ID, note))
}

func audienceOf(c bullpen.Channel) []int64 {
	if c.Kind == bullpen.ChannelDM {
		return c.MemberIDs
	}
	return nil
}
