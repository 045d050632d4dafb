package tasks

import (
	"context"
	"fmt"
	"slices"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// mayChange reports whether actor may change t: its creator, its owner,
// or any person.
func mayChange(actor bullpen.Member, t bullpen.Task) error {
	if actor.Kind == bullpen.KindHuman || actor.ID == t.CreatorID || actor.ID == t.OwnerID {
		return nil
	}
	return bullpen.Errorf(bullpen.EFORBIDDEN, "only task %d's owner, its creator or a person can change it", t.ID)
}

// Update applies a patch. A state change must be a legal move: a task
// with unfinished dependencies or without owner cannot go in_progress,
// one that needs review reaches done only by Review. A note is posted in
// the task's thread with the change.
func (s *Service) Update(ctx context.Context, actor bullpen.Member, id int64, p bullpen.TaskPatch) (bullpen.Task, error) {
	return s.UpdateWith(ctx, actor, id, p, nil)
}

// UpdateWith is Update that runs commit in the change's transaction.
func (s *Service) UpdateWith(ctx context.Context, actor bullpen.Member, id int64, p bullpen.TaskPatch, commit Commit) (bullpen.Task, error) {
	if err := p.Validate(); err != nil {
		return bullpen.Task{}, err
	}
	if p.ReviewerID != nil {
		if _, err := s.member(ctx, *p.ReviewerID, "reviewer_id"); err != nil {
			return bullpen.Task{}, err
		}
	}
	return s.withNote(ctx, actor, id, p.Note, commit, func(tx *store.Tx, t *bullpen.Task, c bullpen.Channel) error {
		if err := mayChange(actor, *t); err != nil {
			return err
		}
		from := t.State
		if err := s.patch(tx, t, p); err != nil {
			return err
		}
		if p.State != nil && *p.State != from {
			if err := s.move(tx, t, from, *p.State); err != nil {
				return err
			}
		}
		if err := s.save(tx, t, c, bullpen.EventTaskUpdated, bullpen.TaskEvent{ByID: actor.ID, From: from, Note: p.Note}); err != nil {
			return err
		}
		return s.after(tx, actor, *t, from)
	})
}

// patch applies p's fields other than the state.
func (s *Service) patch(tx *store.Tx, t *bullpen.Task, p bullpen.TaskPatch) error {
	if p.DependsOn != nil {
		if err := s.checkRefs(tx, t.ID, 0, *p.DependsOn); err != nil {
			return err
		}
		t.DependsOn = *p.DependsOn
	}
	set(&t.Title, p.Title)
	set(&t.Body, p.Body)
	set(&t.Labels, p.Labels)
	set(&t.Links, p.Links)
	set(&t.ReviewerID, p.ReviewerID)
	set(&t.ReviewHuman, p.ReviewHuman)
	set(&t.WhenSubtasksDone, p.WhenSubtasksDone)
	if p.Due != nil {
		t.Due = utc(p.Due)
	}
	if p.ClearDue {
		t.Due = nil
	}
	return nil
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// move changes t's state from from to to, when that is a legal move.
func (s *Service) move(tx *store.Tx, t *bullpen.Task, from, to string) error {
	if !bullpen.CanMove(from, to) {
		return bullpen.Errorf(bullpen.EINVALID, "task %d cannot go from %s to %s", t.ID, from, to)
	}
	switch to {
	case bullpen.TaskInProgress:
		if t.OwnerID == 0 {
			return bullpen.Errorf(bullpen.EINVALID, "task %d has no owner: claim it to start it", t.ID)
		}
		if err := unfinishedDeps(tx, *t); err != nil {
			return err
		}
	case bullpen.TaskDone:
		if t.NeedsReview() {
			return bullpen.Errorf(bullpen.EINVALID, "task %d needs a review: submit it", t.ID)
		}
	}
	t.State = to
	switch {
	case t.Closed():
		now := tx.Now()
		t.ClosedAt, t.LeaseUntil, t.ApprovalID = &now, nil, 0
	case from == bullpen.TaskDone || from == bullpen.TaskCancelled:
		t.ClosedAt = nil
	}
	return nil
}

// withNote runs fn like change, and posts note (when given) as actor in
// the task's thread in the same transaction.
func (s *Service) withNote(ctx context.Context, actor bullpen.Member, id int64, note string, commit Commit, fn func(tx *store.Tx, t *bullpen.Task, c bullpen.Channel) error) (bullpen.Task, error) {
	if note == "" {
		return s.change(ctx, id, commit, fn)
	}
	return s.change(ctx, id, commit, func(tx *store.Tx, t *bullpen.Task, c bullpen.Channel) error {
		if err := fn(tx, t, c); err != nil {
			return err
		}
		return s.say(tx, actor, *t, c, note)
	})
}

// say posts body as actor in t's thread within tx.
func (s *Service) say(tx *store.Tx, actor bullpen.Member, t bullpen.Task, c bullpen.Channel, body string) error {
	if c.Kind == bullpen.ChannelDM && !slices.Contains(c.MemberIDs, actor.ID) {
		return nil // nobody outside a DM speaks in it
	}
	_, err := s.off.PostInTx(tx, actor, c, bullpen.PostInput{ChannelID: c.ID, ThreadID: t.ThreadID, Body: body})
	return err
}

// after applies what a task reaching done sets off: the owners of tasks
// that waited only for it are told in their threads (the mention wakes
// an agent), and a parent whose sub-tasks are all done closes or goes to
// review, as it says.
func (s *Service) after(tx *store.Tx, actor bullpen.Member, t bullpen.Task, from string) error {
	if t.State != bullpen.TaskDone || from == bullpen.TaskDone {
		return nil
	}
	deps, err := tx.TaskDependents(t.ID)
	if err != nil {
		return err
	}
	for _, d := range deps {
		if err := s.unblock(tx, actor, d); err != nil {
			return err
		}
	}
	if t.ParentID == 0 {
		return nil
	}
	return s.parentCheck(tx, actor, t.ParentID)
}

// unblock tells d's owner, when d waited only for done tasks, that it may
// go on; a blocked d with owner moves to in_progress.
func (s *Service) unblock(tx *store.Tx, actor bullpen.Member, d bullpen.Task) error {
	if d.Closed() || d.OwnerID == 0 {
		return nil
	}
	if open, err := tx.UnfinishedTasks(d.DependsOn); err != nil || len(open) > 0 {
		return err
	}
	c, owner, err := s.channelAndMember(tx, d.ChannelID, d.OwnerID)
	if err != nil {
		return err
	}
	if d.State == bullpen.TaskBlocked {
		d.State = bullpen.TaskInProgress
		if err := s.save(tx, &d, c, bullpen.EventTaskUpdated, bullpen.TaskEvent{ByID: actor.ID, From: bullpen.TaskBlocked,
			Reason: "its dependencies are done"}); err != nil {
			return err
		}
	}
	return s.say(tx, actor, d, c, fmt.Sprintf("@%s: every task this one waits for is done; task %d can go on.", owner.Handle, d.ID))
}

// parentCheck closes or submits parent id when all its sub-tasks are done
// and its settings say so.
func (s *Service) parentCheck(tx *store.Tx, actor bullpen.Member, id int64) error {
	p, err := tx.Task(id)
	if err != nil || p.Closed() || p.State == bullpen.TaskInReview || p.WhenSubtasksDone == bullpen.SubtasksDoneNothing {
		return err
	}
	subs, err := tx.Tasks(bullpen.TaskFilter{ParentID: id, Limit: 500})
	if err != nil {
		return err
	}
	for _, sub := range subs {
		if sub.State != bullpen.TaskDone && sub.State != bullpen.TaskCancelled {
			return nil
		}
	}
	c, err := s.db.Channel(tx.Context(), p.ChannelID)
	if err != nil {
		return err
	}
	from := p.State
	if p.WhenSubtasksDone == bullpen.SubtasksDoneReview && p.NeedsReview() {
		p.State = bullpen.TaskInReview
		return s.save(tx, &p, c, bullpen.EventTaskSubmitted, bullpen.TaskEvent{ByID: actor.ID, From: from, Reason: "every sub-task is done"})
	}
	now := tx.Now()
	p.State, p.ClosedAt, p.LeaseUntil = bullpen.TaskDone, &now, nil
	if err := s.save(tx, &p, c, bullpen.EventTaskUpdated, bullpen.TaskEvent{ByID: actor.ID, From: from, Reason: "every sub-task is done"}); err != nil {
		return err
	}
	return s.after(tx, actor, p, from)
}

func (s *Service) channelAndMember(tx *store.Tx, channelID, memberID int64) (bullpen.Channel, bullpen.Member, error) {
	c, err := s.db.Channel(tx.Context(), channelID)
	if err != nil {
		return c, bullpen.Member{}, fmt.Errorf("tasks: channel %d: %w", channelID, err)
	}
	m, err := s.db.Member(tx.Context(), memberID)
	if err != nil {
		return c, m, fmt.Errorf("tasks: member %d: %w", memberID, err)
	}
	return c, m, nil
}
