package tasks

import (
	"context"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Handoff gives the task to member to, with a message posted in its
// thread that mentions them (which wakes an agent). Its owner or a person
// may hand it off; a closed task or one in review cannot be.
func (s *Service) Handoff(ctx context.Context, actor bullpen.Member, id, to int64, message string) (bullpen.Task, error) {
	return s.HandoffWith(ctx, actor, id, to, message, nil)
}

// HandoffWith is Handoff that runs commit in the handoff's transaction.
func (s *Service) HandoffWith(ctx context.Context, actor bullpen.Member, id, to int64, message string, commit Commit) (bullpen.Task, error) {
	if strings.TrimSpace(message) == "" {
		return bullpen.Task{}, bullpen.Errorf(bullpen.EINVALID, "a handoff needs a message for the new owner")
	}
	if err := bullpen.ValidateTaskNote(message); err != nil {
		return bullpen.Task{}, err
	}
	if to == 0 {
		return bullpen.Task{}, bullpen.Errorf(bullpen.EINVALID, "a handoff names the new owner (to)")
	}
	target, err := s.member(ctx, to, "to")
	if err != nil {
		return bullpen.Task{}, err
	}
	return s.change(ctx, id, commit, func(tx *store.Tx, t *bullpen.Task, c bullpen.Channel) error {
		if t.Closed() || t.State == bullpen.TaskInReview {
			return bullpen.Errorf(bullpen.EINVALID, "task %d is %s: it cannot be handed off", t.ID, t.State)
		}
		if t.OwnerID != actor.ID && actor.Kind != bullpen.KindHuman {
			return bullpen.Errorf(bullpen.EFORBIDDEN, "only the owner or a person can hand task %d off", t.ID)
		}
		from := t.State
		t.OwnerID, t.LeaseUntil, t.Failures = target.ID, s.lease(target), 0
		if err := s.save(tx, t, c, bullpen.EventTaskHandedOff, bullpen.TaskEvent{ByID: actor.ID, From: from, Note: message}); err != nil {
			return err
		}
		return s.say(tx, actor, *t, c, fmt.Sprintf("@%s: %s", target.Handle, message))
	})
}

// Submit hands the owner's work in. A task that needs review goes to
// in_review and its reviewer is asked in the thread; one that does not is
// done.
func (s *Service) Submit(ctx context.Context, actor bullpen.Member, id int64, note string) (bullpen.Task, error) {
	return s.SubmitWith(ctx, actor, id, note, nil)
}

// SubmitWith is Submit that runs commit in the submission's transaction.
func (s *Service) SubmitWith(ctx context.Context, actor bullpen.Member, id int64, note string, commit Commit) (bullpen.Task, error) {
	if err := bullpen.ValidateTaskNote(note); err != nil {
		return bullpen.Task{}, err
	}
	return s.withNote(ctx, actor, id, note, commit, func(tx *store.Tx, t *bullpen.Task, c bullpen.Channel) error {
		if t.OwnerID != actor.ID {
			return bullpen.Errorf(bullpen.EFORBIDDEN, "only task %d's owner can submit it", t.ID)
		}
		if t.State != bullpen.TaskInProgress {
			return bullpen.Errorf(bullpen.EINVALID, "task %d is %s: only a task in progress can be submitted", t.ID, t.State)
		}
		from := t.State
		if !t.NeedsReview() {
			if err := s.move(tx, t, from, bullpen.TaskDone); err != nil {
				return err
			}
			if err := s.save(tx, t, c, bullpen.EventTaskSubmitted, bullpen.TaskEvent{ByID: actor.ID, From: from, Note: note}); err != nil {
				return err
			}
			return s.after(tx, actor, *t, from)
		}
		t.State, t.LeaseUntil = bullpen.TaskInReview, nil
		if err := s.save(tx, t, c, bullpen.EventTaskSubmitted, bullpen.TaskEvent{ByID: actor.ID, From: from, Note: note}); err != nil {
			return err
		}
		if t.ReviewerID == 0 || t.ReviewerID == actor.ID {
			return nil
		}
		_, reviewer, err := s.channelAndMember(tx, t.ChannelID, t.ReviewerID)
		if err != nil {
			return err
		}
		return s.say(tx, actor, *t, c, fmt.Sprintf("@%s: task %d is ready for your review.", reviewer.Handle, t.ID))
	})
}

// mayReview reports whether actor may answer t's review: its named
// reviewer, any person when it asks for one, or an admin.
func mayReview(actor bullpen.Member, t bullpen.Task) error {
	if actor.IsAdmin || actor.ID == t.ReviewerID || (t.ReviewHuman && actor.Kind == bullpen.KindHuman) {
		return nil
	}
	return bullpen.Errorf(bullpen.EFORBIDDEN, "you are not task %d's reviewer", t.ID)
}

// Review answers a submission: approving makes the task done; requesting
// changes (a note is required) sends it back to in_progress and tells the
// owner in the thread, which wakes an agent.
func (s *Service) Review(ctx context.Context, actor bullpen.Member, id int64, approve bool, note string) (bullpen.Task, error) {
	if err := bullpen.ValidateTaskNote(note); err != nil {
		return bullpen.Task{}, err
	}
	if !approve && strings.TrimSpace(note) == "" {
		return bullpen.Task{}, bullpen.Errorf(bullpen.EINVALID, "requesting changes needs a note saying what to change")
	}
	return s.change(ctx, id, nil, func(tx *store.Tx, t *bullpen.Task, c bullpen.Channel) error {
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
		if t.OwnerID == 0 {
			t.State = bullpen.TaskOpen
		}
		if err := s.save(tx, t, c, bullpen.EventTaskReviewed, ev); err != nil {
			return err
		}
		owner := "The owner"
		if t.OwnerID != 0 {
			_, m, err := s.channelAndMember(tx, t.ChannelID, t.OwnerID)
			if err != nil {
				return err
			}
			owner, t.LeaseUntil = "@"+m.Handle, s.lease(m)
			if _, err := tx.UpdateTask(*t); err != nil {
				return err
			}
		}
		return s.say(tx, actor, *t, c, fmt.Sprintf("%s: changes requested on task %d: %s", owner, t.ID, note))
	})
}
