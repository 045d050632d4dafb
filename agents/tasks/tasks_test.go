package tasks_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// A task opens a thread in its channel; its creation and the thread's
// first message are events of one transaction; an owner is mentioned.
func TestCreateOpensThread(t *testing.T) {
	f, ctx := openFixture(t), context.Background()
	seq := f.lastSeq(t)
	task := f.task(t, f.ada, bullpen.TaskInput{Title: "Ship the login page", Body: "**now**", OwnerID: f.eng.ID,
		Labels: []string{"web", "p1"}, Links: []bullpen.TaskLink{{Kind: bullpen.TaskLinkWiki, Target: "login"}}})
	if task.ID == 0 || task.State != bullpen.TaskOpen || task.CreatorID != f.ada.ID || task.OwnerID != f.eng.ID || task.ThreadID == 0 ||
		!slices.Equal(task.Labels, []string{"p1", "web"}) || len(task.Links) != 1 || task.LeaseUntil == nil {
		t.Fatalf("Create = %+v", task)
	}
	root, err := f.off.Message(ctx, f.ada, task.ThreadID)
	if err != nil || !strings.Contains(root.Body, "Ship the login page") || !slices.Contains(root.Mentions, "engineer") {
		t.Errorf("thread root = %+v, %v; want the title and a mention of the owner", root, err)
	}
	var types []string
	for _, ev := range f.eventsSince(t, seq) {
		types = append(types, ev.Type)
	}
	if want := []string{bullpen.EventMessagePosted, bullpen.EventTaskCreated}; !slices.Equal(types, want) {
		t.Errorf("events = %v, want %v", types, want)
	}
}

// Bad input of every kind is a 4xx and writes nothing.
func TestBadInputChangesNothing(t *testing.T) {
	f, ctx := openFixture(t), context.Background()
	a := f.task(t, f.ada, bullpen.TaskInput{Title: "A"})
	b := f.task(t, f.ada, bullpen.TaskInput{Title: "B", DependsOn: []int64{a.ID}})
	c := f.task(t, f.ada, bullpen.TaskInput{Title: "C"})
	f.mustUpdate(t, f.ada, c.ID, bullpen.TaskPatch{State: ptr(bullpen.TaskCancelled)})
	seq := f.lastSeq(t)
	bad := []struct {
		name string
		call func() error
		code string
	}{
		{"no title", func() error {
			_, err := f.svc.Create(ctx, f.ada, bullpen.TaskInput{ChannelID: f.general.ID})
			return err
		}, bullpen.EINVALID},
		{"no channel", func() error { _, err := f.svc.Create(ctx, f.ada, bullpen.TaskInput{Title: "x"}); return err }, bullpen.EINVALID},
		{"unknown channel", func() error {
			_, err := f.svc.Create(ctx, f.ada, bullpen.TaskInput{Title: "x", ChannelID: 999})
			return err
		}, bullpen.ENOTFOUND},
		{"unknown dep", func() error {
			_, err := f.svc.Create(ctx, f.ada, bullpen.TaskInput{Title: "x", ChannelID: f.general.ID, DependsOn: []int64{999}})
			return err
		}, bullpen.EINVALID},
		{"cancelled dep", func() error {
			_, err := f.svc.Create(ctx, f.ada, bullpen.TaskInput{Title: "x", ChannelID: f.general.ID, DependsOn: []int64{c.ID}})
			return err
		}, bullpen.EINVALID},
		{"unknown parent", func() error {
			_, err := f.svc.Create(ctx, f.ada, bullpen.TaskInput{Title: "x", ChannelID: f.general.ID, ParentID: 999})
			return err
		}, bullpen.EINVALID},
		{"unknown owner", func() error {
			_, err := f.svc.Create(ctx, f.ada, bullpen.TaskInput{Title: "x", ChannelID: f.general.ID, OwnerID: 999})
			return err
		}, bullpen.EINVALID},
		{"bad label", func() error {
			_, err := f.svc.Create(ctx, f.ada, bullpen.TaskInput{Title: "x", ChannelID: f.general.ID, Labels: []string{"Bad Label"}})
			return err
		}, bullpen.EINVALID},
		{"bad link", func() error {
			_, err := f.svc.Create(ctx, f.ada, bullpen.TaskInput{Title: "x", ChannelID: f.general.ID, Links: []bullpen.TaskLink{{Kind: "ftp", Target: "x"}}})
			return err
		}, bullpen.EINVALID},
		{"unknown state", func() error {
			_, err := f.svc.Update(ctx, f.ada, a.ID, bullpen.TaskPatch{State: ptr("finished")})
			return err
		}, bullpen.EINVALID},
		{"cycle", func() error {
			_, err := f.svc.Update(ctx, f.ada, a.ID, bullpen.TaskPatch{DependsOn: &[]int64{b.ID}})
			return err
		}, bullpen.EINVALID},
		{"self dep", func() error {
			_, err := f.svc.Update(ctx, f.ada, a.ID, bullpen.TaskPatch{DependsOn: &[]int64{a.ID}})
			return err
		}, bullpen.EINVALID},
		{"claim cancelled", func() error { _, err := f.svc.Claim(ctx, f.eng, c.ID); return err }, bullpen.EINVALID},
		{"start unowned", func() error {
			_, err := f.svc.Update(ctx, f.ada, a.ID, bullpen.TaskPatch{State: ptr(bullpen.TaskInProgress)})
			return err
		}, bullpen.EINVALID},
		{"unknown task", func() error { _, err := f.svc.Claim(ctx, f.eng, 999); return err }, bullpen.ENOTFOUND},
		{"agent changes another's task", func() error {
			_, err := f.svc.Update(ctx, f.des, a.ID, bullpen.TaskPatch{Title: ptr("mine")})
			return err
		}, bullpen.EFORBIDDEN},
		{"submit unowned", func() error { _, err := f.svc.Submit(ctx, f.eng, a.ID, ""); return err }, bullpen.EFORBIDDEN},
		{"review not in review", func() error { _, err := f.svc.Review(ctx, f.admin, a.ID, true, ""); return err }, bullpen.EINVALID},
		{"handoff without message", func() error { _, err := f.svc.Handoff(ctx, f.ada, a.ID, f.eng.ID, " "); return err }, bullpen.EINVALID},
		{"bad filter", func() error {
			_, err := f.svc.List(ctx, f.ada, bullpen.TaskFilter{States: []string{"nope"}})
			return err
		}, bullpen.EINVALID},
	}
	for _, tc := range bad {
		wantCode(t, tc.name, tc.call(), tc.code)
	}
	if evs := f.eventsSince(t, seq); len(evs) != 0 {
		t.Errorf("bad input wrote %d events, first %s", len(evs), evs[0].Type)
	}
	if got, _ := f.db.Task(ctx, a.ID); len(got.DependsOn) != 0 || got.Title != "A" {
		t.Errorf("task A after bad updates = %+v", got)
	}
}

// A claim makes one owner; a second claimant gets 409 with the owner; a
// lapsed lease can be taken over; the owner's claim again only renews.
func TestClaim(t *testing.T) {
	f, ctx := openFixture(t), context.Background()
	task := f.task(t, f.ada, bullpen.TaskInput{Title: "A"})
	got, err := f.svc.Claim(ctx, f.eng, task.ID)
	if err != nil || got.OwnerID != f.eng.ID || got.State != bullpen.TaskInProgress || got.LeaseUntil == nil {
		t.Fatalf("Claim = %+v, %v", got, err)
	}
	_, err = f.svc.Claim(ctx, f.des, task.ID)
	var ce *bullpen.TaskClaimedError
	if !errors.As(err, &ce) || ce.Task.OwnerID != f.eng.ID || bullpen.ErrorCode(err) != bullpen.ECONFLICT {
		t.Fatalf("second Claim = %v, want a conflict naming the owner", err)
	}
	seq := f.lastSeq(t)
	if again, err := f.svc.Claim(ctx, f.eng, task.ID); err != nil || again.OwnerID != f.eng.ID {
		t.Errorf("owner claims again = %+v, %v", again, err)
	}
	if evs := f.eventsSince(t, seq); len(evs) != 0 {
		t.Errorf("a renewing claim wrote %d events", len(evs))
	}
	f.clock.Add(11 * time.Minute)
	if got, err := f.svc.Claim(ctx, f.des, task.ID); err != nil || got.OwnerID != f.des.ID {
		t.Errorf("claim over a lapsed lease = %+v, %v", got, err)
	}
	// A person's claim holds without a lease.
	h := f.task(t, f.ada, bullpen.TaskInput{Title: "H"})
	if got, err := f.svc.Claim(ctx, f.ada, h.ID); err != nil || got.LeaseUntil != nil {
		t.Errorf("person's claim = %+v, %v; want no lease", got, err)
	}
}

// Lapsed leases, fired owners and repeated failures return tasks to
// open, each with an event that says why.
func TestClaimsReturnToOpen(t *testing.T) {
	f, ctx := openFixture(t), context.Background()
	a := f.task(t, f.ada, bullpen.TaskInput{Title: "lapses"})
	b := f.task(t, f.ada, bullpen.TaskInput{Title: "fired"})
	c := f.task(t, f.ada, bullpen.TaskInput{Title: "fails"})
	h := f.task(t, f.ada, bullpen.TaskInput{Title: "person's"})
	f.mustClaim(t, f.eng, a.ID)
	f.mustClaim(t, f.des, b.ID)
	f.mustClaim(t, f.des, c.ID)
	f.mustClaim(t, f.ada, h.ID)
	if _, err := f.db.Transact(ctx, func(tx *store.Tx) error { return tx.FireAgent(f.des.ID) }); err != nil {
		t.Fatal(err)
	}
	seq := f.lastSeq(t)
	if n, err := f.svc.Sweep(ctx); err != nil || n != 2 { // b and c: their owner was fired
		t.Fatalf("Sweep = %d, %v; want 2", n, err)
	}
	f.clock.Add(11 * time.Minute)
	if n, err := f.svc.Sweep(ctx); err != nil || n != 1 { // a: its lease lapsed; h is a person's
		t.Fatalf("Sweep after the lease = %d, %v; want 1", n, err)
	}
	var reasons []string
	for _, ev := range f.eventsSince(t, seq) {
		te, err := bullpen.TaskOf(ev)
		if err != nil || ev.Type != bullpen.EventTaskReleased || te.Task.State != bullpen.TaskOpen || te.Task.OwnerID != 0 {
			t.Errorf("event %s = %+v, %v", ev.Type, te, err)
		}
		reasons = append(reasons, te.Reason)
	}
	if want := []string{"the owner was fired", "the owner was fired", "the owner's lease lapsed"}; !slices.Equal(reasons, want) {
		t.Errorf("reasons = %q, want %q", reasons, want)
	}
	// Three failed turns in a row give the task back; a good one renews.
	d := f.task(t, f.ada, bullpen.TaskInput{Title: "flaky"})
	f.mustClaim(t, f.eng, d.ID)
	for i, ok := range []bool{false, false, true, false, false} {
		if err := f.svc.RecordTurn(ctx, d.ID, f.eng.ID, ok, bullpen.TaskTokens{Turns: 1, ModelCalls: 2, Input: 100, Output: 10}); err != nil {
			t.Fatalf("RecordTurn %d: %v", i, err)
		}
	}
	if got, _ := f.db.Task(ctx, d.ID); got.OwnerID != f.eng.ID || got.Failures != 2 || got.Tokens.Input != 500 || got.Tokens.ModelCalls != 10 {
		t.Fatalf("after 2 failures, a success, 2 failures: %+v", got)
	}
	if err := f.svc.RecordTurn(ctx, d.ID, f.eng.ID, false, bullpen.TaskTokens{Turns: 1}); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.db.Task(ctx, d.ID); got.OwnerID != 0 || got.State != bullpen.TaskOpen || got.Tokens.Turns != 6 {
		t.Errorf("after 3 failures in a row: %+v; want open without owner", got)
	}
}

// A task waits for its dependencies; when the last is done its owner is
// told in the task's thread (the mention wakes an agent).
func TestDependencies(t *testing.T) {
	f, ctx := openFixture(t), context.Background()
	dep := f.task(t, f.ada, bullpen.TaskInput{Title: "API"})
	task := f.task(t, f.ada, bullpen.TaskInput{Title: "UI", DependsOn: []int64{dep.ID}})
	got := f.mustClaim(t, f.des, task.ID)
	if got.State != bullpen.TaskBlocked {
		t.Fatalf("claim with an unfinished dependency: state %s, want blocked", got.State)
	}
	_, err := f.svc.Update(ctx, f.des, task.ID, bullpen.TaskPatch{State: ptr(bullpen.TaskInProgress)})
	wantCode(t, "start before the dependency is done", err, bullpen.EINVALID)
	f.mustClaim(t, f.eng, dep.ID)
	f.mustUpdate(t, f.eng, dep.ID, bullpen.TaskPatch{State: ptr(bullpen.TaskDone), Note: "API is up"})
	if got, _ := f.db.Task(ctx, task.ID); got.State != bullpen.TaskInProgress {
		t.Errorf("after the dependency is done: state %s, want in_progress", got.State)
	}
	_, replies, err := f.off.Thread(ctx, f.ada, task.ThreadID)
	if err != nil || len(replies) != 1 || !slices.Contains(replies[0].Mentions, "designer") {
		t.Errorf("blocked task's thread = %+v, %v; want one reply mentioning @designer", replies, err)
	}
}

// Handoff, submission, review: changes requested go back to the owner;
// approval closes; a parent closes once all its sub-tasks are done.
func TestReviewAndParent(t *testing.T) {
	f, ctx := openFixture(t), context.Background()
	parent := f.task(t, f.ada, bullpen.TaskInput{Title: "Feature", WhenSubtasksDone: bullpen.SubtasksDoneClose})
	a := f.task(t, f.ada, bullpen.TaskInput{Title: "Backend", ParentID: parent.ID, ReviewHuman: true})
	b := f.task(t, f.ada, bullpen.TaskInput{Title: "Design", ParentID: parent.ID, ReviewerID: f.ada.ID})
	f.mustClaim(t, f.eng, a.ID)
	if got, err := f.svc.Handoff(ctx, f.eng, a.ID, f.des.ID, "you know the schema better"); err != nil || got.OwnerID != f.des.ID {
		t.Fatalf("Handoff = %+v, %v", got, err)
	}
	_, err := f.svc.Submit(ctx, f.eng, a.ID, "")
	wantCode(t, "former owner submits", err, bullpen.EFORBIDDEN)
	if got, err := f.svc.Submit(ctx, f.des, a.ID, "done, see PR"); err != nil || got.State != bullpen.TaskInReview {
		t.Fatalf("Submit = %+v, %v", got, err)
	}
	_, err = f.svc.Review(ctx, f.eng, a.ID, true, "")
	wantCode(t, "an agent reviews a person's review", err, bullpen.EFORBIDDEN)
	if got, err := f.svc.Review(ctx, f.ada, a.ID, false, "add tests"); err != nil || got.State != bullpen.TaskInProgress || got.OwnerID != f.des.ID {
		t.Fatalf("request changes = %+v, %v", got, err)
	}
	_, replies, _ := f.off.Thread(ctx, f.ada, a.ThreadID)
	if last := replies[len(replies)-1]; !slices.Contains(last.Mentions, "designer") || !strings.Contains(last.Body, "add tests") {
		t.Errorf("last reply = %q; want the note, mentioning the owner", last.Body)
	}
	f.mustSubmit(t, f.des, a.ID)
	f.mustReview(t, f.ada, a.ID)
	f.mustClaim(t, f.eng, b.ID)
	f.mustSubmit(t, f.eng, b.ID)
	if got, _ := f.db.Task(ctx, parent.ID); got.State != bullpen.TaskOpen {
		t.Errorf("parent with one sub-task in review: %s, want open", got.State)
	}
	f.mustReview(t, f.ada, b.ID)
	if got, _ := f.db.Task(ctx, parent.ID); got.State != bullpen.TaskDone || got.ClosedAt == nil {
		t.Errorf("parent after every sub-task is done: %+v, want done", got)
	}
}

func ptr[T any](v T) *T { return &v }

func (f *fixture) mustClaim(t *testing.T, m bullpen.Member, id int64) bullpen.Task {
	t.Helper()
	got, err := f.svc.Claim(context.Background(), m, id)
	if err != nil {
		t.Fatalf("@%s claims %d: %v", m.Handle, id, err)
	}
	return got
}

func (f *fixture) mustUpdate(t *testing.T, m bullpen.Member, id int64, p bullpen.TaskPatch) bullpen.Task {
	t.Helper()
	got, err := f.svc.Update(context.Background(), m, id, p)
	if err != nil {
		t.Fatalf("@%s updates %d: %v", m.Handle, id, err)
	}
	return got
}

func (f *fixture) mustSubmit(t *testing.T, m bullpen.Member, id int64) {
	t.Helper()
	if _, err := f.svc.Submit(context.Background(), m, id, ""); err != nil {
		t.Fatalf("@%s submits %d: %v", m.Handle, id, err)
	}
}

func (f *fixture) mustReview(t *testing.T, m bullpen.Member, id int64) {
	t.Helper()
	if _, err := f.svc.Review(context.Background(), m, id, true, ""); err != nil {
		t.Fatalf("@%s approves %d: %v", m.Handle, id, err)
	}
}
