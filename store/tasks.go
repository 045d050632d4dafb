package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
)

type taskRow struct {
	ID               int64 `gorm:"primaryKey"`
	Title            string
	Body             string
	State            string
	OwnerID          *int64
	CreatorID        int64
	ParentID         *int64
	ChannelID        int64
	ThreadID         int64
	Links            string
	DueAt            *time.Time
	ReviewerID       *int64
	ReviewHuman      bool
	WhenSubtasksDone string
	LeaseUntil       *time.Time
	Failures         int
	ApprovalID       *int64
	Turns            int64
	ModelCalls       int64
	InputTokens      int64
	OutputTokens     int64
	CreatedAt        time.Time
	UpdatedAt        time.Time
	ClosedAt         *time.Time
}

func (taskRow) TableName() string { return "tasks" }

type taskDepRow struct {
	TaskID    int64 `gorm:"primaryKey"`
	DependsOn int64 `gorm:"primaryKey"`
}

func (taskDepRow) TableName() string { return "task_deps" }

type taskLabelRow struct {
	Label  string `gorm:"primaryKey"`
	TaskID int64  `gorm:"primaryKey"`
}

func (taskLabelRow) TableName() string { return "task_labels" }

func (r *taskRow) toTask() bullpen.Task {
	t := bullpen.Task{ID: r.ID, Title: r.Title, Body: r.Body, State: r.State, OwnerID: deref(r.OwnerID), CreatorID: r.CreatorID,
		ParentID: deref(r.ParentID), ChannelID: r.ChannelID, ThreadID: r.ThreadID, Due: utcPtr(r.DueAt),
		ReviewerID: deref(r.ReviewerID), ReviewHuman: r.ReviewHuman, WhenSubtasksDone: r.WhenSubtasksDone,
		LeaseUntil: utcPtr(r.LeaseUntil), Failures: r.Failures, ApprovalID: deref(r.ApprovalID),
		Tokens:    bullpen.TaskTokens{Turns: r.Turns, ModelCalls: r.ModelCalls, Input: r.InputTokens, Output: r.OutputTokens},
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), ClosedAt: utcPtr(r.ClosedAt),
		DependsOn: []int64{}, Labels: []string{}, Links: []bullpen.TaskLink{}}
	if r.Links != "" {
		_ = json.Unmarshal([]byte(r.Links), &t.Links) // written by us from a valid slice
	}
	return t
}

func fromTask(t bullpen.Task) (taskRow, error) {
	links := t.Links
	if links == nil {
		links = []bullpen.TaskLink{}
	}
	raw, err := json.Marshal(links)
	if err != nil {
		return taskRow{}, fmt.Errorf("store: encode task links: %w", err)
	}
	return taskRow{ID: t.ID, Title: t.Title, Body: t.Body, State: t.State, OwnerID: ref(t.OwnerID), CreatorID: t.CreatorID,
		ParentID: ref(t.ParentID), ChannelID: t.ChannelID, ThreadID: t.ThreadID, Links: string(raw), DueAt: t.Due,
		ReviewerID: ref(t.ReviewerID), ReviewHuman: t.ReviewHuman, WhenSubtasksDone: t.WhenSubtasksDone,
		LeaseUntil: t.LeaseUntil, Failures: t.Failures, ApprovalID: ref(t.ApprovalID), Turns: t.Tokens.Turns,
		ModelCalls: t.Tokens.ModelCalls, InputTokens: t.Tokens.Input, OutputTokens: t.Tokens.Output,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, ClosedAt: t.ClosedAt}, nil
}

// CreateTask stores a new task with its dependencies and labels; the
// caller checked them.
func (tx *Tx) CreateTask(t bullpen.Task) (bullpen.Task, error) {
	t.CreatedAt, t.UpdatedAt = tx.now, tx.now
	row, err := fromTask(t)
	if err != nil {
		return t, err
	}
	row.ID = 0
	if err := tx.g.Create(&row).Error; err != nil {
		return t, fmt.Errorf("store: insert task: %w", err)
	}
	t.ID = row.ID
	if err := tx.setTaskSets(t.ID, t.DependsOn, t.Labels); err != nil {
		return t, err
	}
	return tx.Task(t.ID)
}

// UpdateTask writes every field of t (its dependencies and labels too)
// and stamps UpdatedAt.
func (tx *Tx) UpdateTask(t bullpen.Task) (bullpen.Task, error) {
	t.UpdatedAt = tx.now
	row, err := fromTask(t)
	if err != nil {
		return t, err
	}
	if err := tx.g.Select("*").Omit("id", "created_at").Where("id = ?", t.ID).Updates(&row).Error; err != nil {
		return t, fmt.Errorf("store: update task %d: %w", t.ID, err)
	}
	if err := tx.g.Where("task_id = ?", t.ID).Delete(&taskDepRow{}).Error; err != nil {
		return t, fmt.Errorf("store: clear task deps: %w", err)
	}
	if err := tx.g.Where("task_id = ?", t.ID).Delete(&taskLabelRow{}).Error; err != nil {
		return t, fmt.Errorf("store: clear task labels: %w", err)
	}
	if err := tx.setTaskSets(t.ID, t.DependsOn, t.Labels); err != nil {
		return t, err
	}
	return tx.Task(t.ID)
}

func (tx *Tx) setTaskSets(id int64, deps []int64, labels []string) error {
	for _, d := range deps {
		if err := tx.g.Create(&taskDepRow{TaskID: id, DependsOn: d}).Error; err != nil {
			return fmt.Errorf("store: insert task dep: %w", err)
		}
	}
	for _, l := range labels {
		if err := tx.g.Create(&taskLabelRow{Label: l, TaskID: id}).Error; err != nil {
			return fmt.Errorf("store: insert task label: %w", err)
		}
	}
	return nil
}

// AddTaskUsage adds one turn's usage to a task's totals.
func (tx *Tx) AddTaskUsage(id int64, u bullpen.TaskTokens) error {
	err := tx.g.Model(&taskRow{}).Where("id = ?", id).Updates(map[string]any{
		"turns": gorm.Expr("turns + ?", u.Turns), "model_calls": gorm.Expr("model_calls + ?", u.ModelCalls),
		"input_tokens": gorm.Expr("input_tokens + ?", u.Input), "output_tokens": gorm.Expr("output_tokens + ?", u.Output)}).Error
	if err != nil {
		return fmt.Errorf("store: task usage: %w", err)
	}
	return nil
}

// Task reads a task inside the transaction (the writers' lock held, so
// what it reads stays true until commit).
func (tx *Tx) Task(id int64) (bullpen.Task, error) { return loadTask(tx.g, id) }

// Task returns a task by ID.
func (db *DB) Task(ctx context.Context, id int64) (bullpen.Task, error) {
	return loadTask(db.read(ctx), id)
}

func loadTask(g *gorm.DB, id int64) (bullpen.Task, error) {
	var row taskRow
	if err := g.First(&row, id).Error; err != nil {
		return bullpen.Task{}, notFound(err, "task %d not found", id)
	}
	ts, err := withSets(g, []taskRow{row})
	if err != nil {
		return bullpen.Task{}, err
	}
	return ts[0], nil
}

// withSets converts rows and fills their dependencies and labels with one
// query each.
func withSets(g *gorm.DB, rows []taskRow) ([]bullpen.Task, error) {
	out := make([]bullpen.Task, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]int64, len(rows))
	at := map[int64]int{}
	for i := range rows {
		out[i] = rows[i].toTask()
		ids[i] = rows[i].ID
		at[rows[i].ID] = i
	}
	var deps []taskDepRow
	if err := g.Where("task_id IN ?", ids).Order("depends_on").Find(&deps).Error; err != nil {
		return nil, fmt.Errorf("store: task deps: %w", err)
	}
	for _, d := range deps {
		out[at[d.TaskID]].DependsOn = append(out[at[d.TaskID]].DependsOn, d.DependsOn)
	}
	var labels []taskLabelRow
	if err := g.Where("task_id IN ?", ids).Order("label").Find(&labels).Error; err != nil {
		return nil, fmt.Errorf("store: task labels: %w", err)
	}
	for _, l := range labels {
		out[at[l.TaskID]].Labels = append(out[at[l.TaskID]].Labels, l.Label)
	}
	return out, nil
}

// Tasks lists tasks that match f, newest first (f.Limit of them, 50 when 0).
func (db *DB) Tasks(ctx context.Context, f bullpen.TaskFilter) ([]bullpen.Task, error) {
	return listTasks(db.read(ctx), f)
}

// Tasks is DB.Tasks inside the transaction.
func (tx *Tx) Tasks(f bullpen.TaskFilter) ([]bullpen.Task, error) { return listTasks(tx.g, f) }

func listTasks(g *gorm.DB, f bullpen.TaskFilter) ([]bullpen.Task, error) {
	if f.Limit == 0 {
		f.Limit = 50
	}
	q := g.Model(&taskRow{}).Order("tasks.id DESC").Limit(f.Limit)
	switch {
	case len(f.States) > 0:
		q = q.Where("tasks.state IN ?", f.States)
	case f.Open:
		q = q.Where("tasks.state NOT IN ?", []string{bullpen.TaskDone, bullpen.TaskCancelled})
	}
	if f.OwnerID != 0 {
		q = q.Where("tasks.owner_id = ?", f.OwnerID)
	}
	if f.Unowned {
		q = q.Where("tasks.owner_id IS NULL")
	}
	if f.ChannelID != 0 {
		q = q.Where("tasks.channel_id = ?", f.ChannelID)
	}
	if f.ParentID != 0 {
		q = q.Where("tasks.parent_id = ?", f.ParentID)
	}
	if f.Before != 0 {
		q = q.Where("tasks.id < ?", f.Before)
	}
	if f.Label != "" {
		q = q.Joins("JOIN task_labels ON task_labels.task_id = tasks.id AND task_labels.label = ?", f.Label)
	}
	var rows []taskRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list tasks: %w", err)
	}
	return withSets(g, rows)
}

// TaskDeps maps each of ids to the tasks it depends on.
func (tx *Tx) TaskDeps(ids []int64) (map[int64][]int64, error) {
	var deps []taskDepRow
	if err := tx.g.Where("task_id IN ?", ids).Find(&deps).Error; err != nil {
		return nil, fmt.Errorf("store: task deps: %w", err)
	}
	out := map[int64][]int64{}
	for _, d := range deps {
		out[d.TaskID] = append(out[d.TaskID], d.DependsOn)
	}
	return out, nil
}

// TaskDependents returns the tasks that depend on task id.
func (tx *Tx) TaskDependents(id int64) ([]bullpen.Task, error) {
	var rows []taskRow
	err := tx.g.Where("id IN (SELECT task_id FROM task_deps WHERE depends_on = ?)", id).Order("id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: task dependents: %w", err)
	}
	return withSets(tx.g, rows)
}

// UnfinishedTasks returns those of ids that are not done.
func (tx *Tx) UnfinishedTasks(ids []int64) ([]int64, error) {
	var out []int64
	if len(ids) == 0 {
		return out, nil
	}
	err := tx.g.Model(&taskRow{}).Where("id IN ? AND state <> ?", ids, bullpen.TaskDone).Order("id").Pluck("id", &out).Error
	if err != nil {
		return nil, fmt.Errorf("store: unfinished tasks: %w", err)
	}
	return out, nil
}

// TaskByApproval returns the task whose pending review is approval id.
func (tx *Tx) TaskByApproval(approvalID int64) (bullpen.Task, error) {
	var row taskRow
	if err := tx.g.Where("approval_id = ?", approvalID).First(&row).Error; err != nil {
		return bullpen.Task{}, notFound(err, "no task waits on approval %d", approvalID)
	}
	return loadTask(tx.g, row.ID)
}

// LapsedTasks returns up to limit owned tasks, neither closed nor in
// review, whose lease ended before now or whose owner is a fired agent.
func (tx *Tx) LapsedTasks(now time.Time, limit int) ([]bullpen.Task, error) {
	var rows []taskRow
	err := tx.g.Where("owner_id IS NOT NULL AND state NOT IN ? AND (lease_until < ? OR owner_id IN (SELECT member_id FROM agents WHERE state = ?))",
		[]string{bullpen.TaskDone, bullpen.TaskCancelled, bullpen.TaskInReview}, now, bullpen.AgentFired).Order("id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: lapsed tasks: %w", err)
	}
	return withSets(tx.g, rows)
}

// Context is the context the transaction runs with, for reads a writer
// makes while it holds the transaction.
func (tx *Tx) Context() context.Context { return tx.g.Statement.Context }

// TaskByThread returns the task whose thread's root is message id.
func (tx *Tx) TaskByThread(threadID int64) (bullpen.Task, error) {
	var row taskRow
	if err := tx.g.Where("thread_id = ?", threadID).First(&row).Error; err != nil {
		return bullpen.Task{}, notFound(err, "no task has thread %d", threadID)
	}
	return loadTask(tx.g, row.ID)
}

// TaskByThread returns the task whose thread's root is message id, outside
// a transaction.
func (db *DB) TaskByThread(ctx context.Context, threadID int64) (bullpen.Task, error) {
	var row taskRow
	if err := db.read(ctx).Where("thread_id = ?", threadID).First(&row).Error; err != nil {
		return bullpen.Task{}, notFound(err, "no task has thread %d", threadID)
	}
	return loadTask(db.read(ctx), row.ID)
}

// SetTurnTask records the task a turn worked on.
func (tx *Tx) SetTurnTask(turnID, taskID int64) error {
	if err := tx.g.Model(&turnRow{}).Where("id = ?", turnID).Update("task_id", taskID).Error; err != nil {
		return fmt.Errorf("store: turn task: %w", err)
	}
	return nil
}
