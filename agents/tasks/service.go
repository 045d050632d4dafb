// Package tasks is the office's work that lasts: tasks with one owner at
// a time (an atomic claim, a lease for agents), sub-tasks, dependencies,
// handoffs and review gates. Every change is stored with its event in one
// transaction; the store's writers' lock (an advisory lock on PostgreSQL)
// makes each check-and-change atomic across replicas.
package tasks

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Office is what tasks need of the office: a channel the actor may see,
// and a post inside the transaction of the task's change.
type Office interface {
	Channel(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Channel, error)
	PostInTx(tx *store.Tx, actor bullpen.Member, c bullpen.Channel, in bullpen.PostInput) (bullpen.Message, error)
}

// Config configures the service.
type Config struct {
	// LeaseTTL is how long an agent's claim holds without work renewing
	// it (default 30 minutes).
	LeaseTTL time.Duration
	// MaxFailures is how many failed turns in a row return a task to
	// open (default 3).
	MaxFailures int
	Now         func() time.Time
	Logger      *slog.Logger
}

// Service serves tasks.
type Service struct {
	db  *store.DB
	off Office
	cfg Config
}

// New returns the service.
func New(db *store.DB, off Office, cfg Config) *Service {
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = 30 * time.Minute
	}
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = 3
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Service{db: db, off: off, cfg: cfg}
}

// Create stores a task, and its sub-tasks (in.Subtasks) in the same
// transaction, and opens a thread for each in in.ChannelID, which actor
// must be able to post in. An owner is mentioned in the thread's first
// message, which wakes an agent.
func (s *Service) Create(ctx context.Context, actor bullpen.Member, in bullpen.TaskInput) (bullpen.Task, error) {
	return s.CreateWith(ctx, actor, in, nil)
}

// CreateWith is Create that runs commit in the creation's transaction
// with the parent task.
func (s *Service) CreateWith(ctx context.Context, actor bullpen.Member, in bullpen.TaskInput, commit Commit) (bullpen.Task, error) {
	if err := in.Validate(); err != nil {
		return bullpen.Task{}, err
	}
	c, err := s.off.Channel(ctx, actor, in.ChannelID)
	if err != nil {
		return bullpen.Task{}, err
	}
	t, owner, err := s.newTask(ctx, actor, c, in)
	if err != nil {
		return t, err
	}
	subs := make([]bullpen.Task, len(in.Subtasks))
	owners := make([]bullpen.Member, len(in.Subtasks))
	for i, sub := range in.Subtasks {
		sub.ChannelID = c.ID
		if subs[i], owners[i], err = s.newTask(ctx, actor, c, sub); err != nil {
			return t, fmt.Errorf("sub-task %d: %w", i+1, err)
		}
	}
	_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
		if err := s.createTx(tx, actor, c, &t, owner, subs, owners); err != nil {
			return err
		}
		if commit == nil {
			return nil
		}
		return commit(tx, t)
	})
	return t, err
}

// createTx stores t and its sub-tasks, each with its thread, in tx.
func (s *Service) createTx(tx *store.Tx, actor bullpen.Member, c bullpen.Channel, t *bullpen.Task, owner bullpen.Member, subs []bullpen.Task, owners []bullpen.Member) error {
	msg, err := s.off.PostInTx(tx, actor, c, bullpen.PostInput{ChannelID: c.ID, Body: threadOpening(*t, owner)})
	if err != nil {
		return err
	}
	if err := s.insert(tx, actor, c, t, msg.ID); err != nil {
		return err
	}
	for i := range subs {
		subs[i].ParentID = t.ID
		m, err := s.off.PostInTx(tx, actor, c, bullpen.PostInput{ChannelID: c.ID, Body: threadOpening(subs[i], owners[i])})
		if err != nil {
			return err
		}
		if err := s.insert(tx, actor, c, &subs[i], m.ID); err != nil {
			return err
		}
	}
	return nil
}

// newTask checks in's members and makes the task it describes.
func (s *Service) newTask(ctx context.Context, actor bullpen.Member, c bullpen.Channel, in bullpen.TaskInput) (bullpen.Task, bullpen.Member, error) {
	owner, err := s.member(ctx, in.OwnerID, "owner_id")
	if err != nil {
		return bullpen.Task{}, owner, err
	}
	if _, err := s.member(ctx, in.ReviewerID, "reviewer_id"); err != nil {
		return bullpen.Task{}, owner, err
	}
	t := bullpen.Task{Title: in.Title, Body: in.Body, State: bullpen.TaskOpen, OwnerID: in.OwnerID, CreatorID: actor.ID,
		ParentID: in.ParentID, ChannelID: c.ID, DependsOn: in.DependsOn, Labels: in.Labels, Links: in.Links, Due: utc(in.Due),
		ReviewerID: in.ReviewerID, ReviewHuman: in.ReviewHuman, WhenSubtasksDone: in.WhenSubtasksDone}
	if owner.ID != 0 {
		t.LeaseUntil = s.lease(owner)
	}
	return t, owner, nil
}

// insert checks t's references and stores it with its thread and event.
func (s *Service) insert(tx *store.Tx, actor bullpen.Member, c bullpen.Channel, t *bullpen.Task, threadID int64) error {
	if err := s.checkRefs(tx, 0, t.ParentID, t.DependsOn); err != nil {
		return err
	}
	t.ThreadID = threadID
	created, err := tx.CreateTask(*t)
	if err != nil {
		return err
	}
	*t = created
	return s.emit(tx, c, bullpen.EventTaskCreated, bullpen.TaskEvent{Task: created, ByID: actor.ID})
}

// threadOpening is the first message of a task's thread. It mentions the
// owner, if any: the mention rules wake an agent that is assigned.
func threadOpening(t bullpen.Task, owner bullpen.Member) string {
	body := "**Task:** " + t.Title
	if owner.ID != 0 {
		body += "\n\nAssigned to @" + owner.Handle + "."
	}
	return body
}

// Get returns a task.
func (s *Service) Get(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Task, error) {
	return s.db.Task(ctx, id)
}

// List returns the tasks that match f, newest first.
func (s *Service) List(ctx context.Context, actor bullpen.Member, f bullpen.TaskFilter) ([]bullpen.Task, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return s.db.Tasks(ctx, f)
}

// member returns member id (field names it in errors); id 0 is none.
func (s *Service) member(ctx context.Context, id int64, field string) (bullpen.Member, error) {
	if id == 0 {
		return bullpen.Member{}, nil
	}
	if id < 0 {
		return bullpen.Member{}, bullpen.Errorf(bullpen.EINVALID, "%s must be a member's ID", field)
	}
	m, err := s.db.Member(ctx, id)
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return m, bullpen.Errorf(bullpen.EINVALID, "%s %d is not a member", field, id)
	}
	if err != nil {
		return m, fmt.Errorf("tasks: read member: %w", err)
	}
	if m.Kind == bullpen.KindAgent {
		a, err := s.db.Agent(ctx, id)
		if err == nil && a.State == bullpen.AgentFired {
			return m, bullpen.Errorf(bullpen.EINVALID, "%s @%s was fired", field, m.Handle)
		}
	}
	return m, nil
}

// lease is when a new claim by m lapses: agents hold a lease, people do
// not.
func (s *Service) lease(m bullpen.Member) *time.Time {
	if m.Kind != bullpen.KindAgent {
		return nil
	}
	t := s.cfg.Now().UTC().Add(s.cfg.LeaseTTL)
	return &t
}

// emit writes a task event in tx, seen by whoever sees the task's channel.
func (s *Service) emit(tx *store.Tx, c bullpen.Channel, typ string, ev bullpen.TaskEvent) error {
	_, err := tx.Emit(typ, c.ID, audienceOf(c), ev)
	return err
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
