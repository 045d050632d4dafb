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
// in_review: a named reviewer is asked in the thread, and a person's
// review is asked for with an approval when the owner is an agent in a
// turn (see SubmitWith). One that needs no review is done.
func (s *Service) Submit(ctx context.Context, actor bullpen.Member, id int64, note string) (bullpen.Task, error) {
	return s.SubmitWith(ctx, actor, id, note, 0, nil)
}

// SubmitWith is Submit by an agent in turn turnID (0: none), running
// commit in the submission's transaction. The approval that asks a
// person to review belongs to that turn, so the dashboard's approvals
// panel and Telegram's buttons offer it.
func (s *Service) SubmitWith(ctx context.Context, actor bullpen.Member, id int64, note string, turnID int64, commit Commit) (bullpen.Task, error) {
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
		var reviewer bullpen.Member
		if t.ReviewerID != 0 {
			var err error
			if _, reviewer, err = s.channelAndMember(tx, t.ChannelID, t.ReviewerID); err != nil {
				return err
			}
		}
		if turnID != 0 && actor.Kind == bullpen.KindAgent && (t.ReviewHuman || reviewer.Kind == bullpen.KindHuman) {
			if err := s.askApproval(tx, actor, t, c, turnID); err != nil {
				return err
			}
		}
		if err := s.save(tx, t, c, bullpen.EventTaskSubmitted, bullpen.TaskEvent{ByID: actor.ID, From: from, Note: note}); err != nil {
			return err
		}
		if reviewer.ID == 0 || reviewer.ID == actor.ID {
			return nil
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
