package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
)

type routineRow struct {
	ID            int64 `gorm:"primaryKey"`
	Name          string
	Cron          string
	TZ            string `gorm:"column:tz"`
	IntervalSec   int64
	Action        string
	ChannelID     int64
	AgentID       *int64
	Prompt        string
	Task          string
	Skip          string
	SkipLabel     string
	Enabled       bool
	CreatorID     int64
	NextRunAt     *time.Time
	LastRunAt     *time.Time
	LastState     string
	LastReason    string
	LastMessageID int64
	Deleted       bool
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

func (routineRow) TableName() string { return "routines" }

type tickRow struct {
	ID        int64 `gorm:"primaryKey"`
	RoutineID int64
	DueAt     time.Time
	State     string
	Reason    string
	Missed    int64
	MessageID *int64
	TaskID    *int64
	CreatedAt time.Time
}

func (tickRow) TableName() string { return "routine_ticks" }

func (r *routineRow) toRoutine() bullpen.Routine {
	out := bullpen.Routine{ID: r.ID, Name: r.Name, Cron: r.Cron, TZ: r.TZ, IntervalSec: r.IntervalSec, Action: r.Action,
		ChannelID: r.ChannelID, AgentID: deref(r.AgentID), Prompt: r.Prompt, Skip: r.Skip, SkipLabel: r.SkipLabel,
		Enabled: r.Enabled, CreatorID: r.CreatorID, NextRunAt: utcPtr(r.NextRunAt), LastRunAt: utcPtr(r.LastRunAt),
		LastState: r.LastState, LastReason: r.LastReason, LastMessageID: r.LastMessageID,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if r.Task != "" {
		var in bullpen.TaskInput
		if json.Unmarshal([]byte(r.Task), &in) == nil {
			out.Task = &in
		}
	}
	return out
}

func fromRoutine(r bullpen.Routine) (routineRow, error) {
	row := routineRow{ID: r.ID, Name: r.Name, Cron: r.Cron, TZ: r.TZ, IntervalSec: r.IntervalSec, Action: r.Action,
		ChannelID: r.ChannelID, AgentID: ref(r.AgentID), Prompt: r.Prompt, Skip: r.Skip, SkipLabel: r.SkipLabel,
		Enabled: r.Enabled, CreatorID: r.CreatorID, NextRunAt: r.NextRunAt, LastRunAt: r.LastRunAt, LastState: r.LastState,
		LastReason: r.LastReason, LastMessageID: r.LastMessageID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.Task != nil {
		raw, err := json.Marshal(r.Task)
		if err != nil {
			return row, fmt.Errorf("store: encode routine task: %w", err)
		}
		row.Task = string(raw)
	}
	return row, nil
}

// CreateRoutine stores a routine.
func (tx *Tx) CreateRoutine(r bullpen.Routine) (bullpen.Routine, error) {
	r.CreatedAt, r.UpdatedAt = tx.now, tx.now
	row, err := fromRoutine(r)
	if err != nil {
		return r, err
	}
	row.ID = 0
	if err := tx.g.Create(&row).Error; err != nil {
		return r, fmt.Errorf("store: insert routine: %w", err)
	}
	return row.toRoutine(), nil
}

// UpdateRoutine writes every field of r.
func (tx *Tx) UpdateRoutine(r bullpen.Routine) (bullpen.Routine, error) {
	r.UpdatedAt = tx.now
	row, err := fromRoutine(r)
	if err != nil {
		return r, err
	}
	if err := tx.g.Select("*").Omit("id", "created_at", "deleted").Where("id = ?", r.ID).Updates(&row).Error; err != nil {
		return r, fmt.Errorf("store: update routine %d: %w", r.ID, err)
	}
	return tx.Routine(r.ID)
}

// DeleteRoutine marks a routine deleted; its ticks stay.
func (tx *Tx) DeleteRoutine(id int64) error {
	if err := tx.g.Model(&routineRow{}).Where("id = ?", id).Updates(map[string]any{"deleted": true, "enabled": false}).Error; err != nil {
		return fmt.Errorf("store: delete routine: %w", err)
	}
	return nil
}

// Routine reads a routine in the transaction.
func (tx *Tx) Routine(id int64) (bullpen.Routine, error) { return loadRoutine(tx.g, id) }

// Routine returns a routine that is not deleted.
func (db *DB) Routine(ctx context.Context, id int64) (bullpen.Routine, error) {
	return loadRoutine(db.read(ctx), id)
}

func loadRoutine(g *gorm.DB, id int64) (bullpen.Routine, error) {
	var row routineRow
	if err := g.Where("deleted = ?", false).First(&row, id).Error; err != nil {
		return bullpen.Routine{}, notFound(err, "routine %d not found", id)
	}
	return row.toRoutine(), nil
}

// Routines lists the routines, by ID.
func (db *DB) Routines(ctx context.Context) ([]bullpen.Routine, error) {
	var rows []routineRow
	if err := db.read(ctx).Where("deleted = ?", false).Order("id").Limit(1000).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list routines: %w", err)
	}
	out := make([]bullpen.Routine, len(rows))
	for i := range rows {
		out[i] = rows[i].toRoutine()
	}
	return out, nil
}

// DueRoutines returns up to limit enabled routines whose next tick is at
// or before now.
func (tx *Tx) DueRoutines(now time.Time, limit int) ([]bullpen.Routine, error) {
	var rows []routineRow
	err := tx.g.Where("enabled = ? AND deleted = ? AND next_run_at <= ?", true, false, now).Order("next_run_at, id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: due routines: %w", err)
	}
	out := make([]bullpen.Routine, len(rows))
	for i := range rows {
		out[i] = rows[i].toRoutine()
	}
	return out, nil
}

// CreateTick stores a tick; a second tick of the same routine and due
// time is ECONFLICT (the tick already happened).
func (tx *Tx) CreateTick(k bullpen.RoutineTick) (bullpen.RoutineTick, error) {
	row := tickRow{RoutineID: k.RoutineID, DueAt: k.DueAt.UTC(), State: k.State, Reason: k.Reason, Missed: k.Missed,
		MessageID: ref(k.MessageID), TaskID: ref(k.TaskID), CreatedAt: tx.now}
	if err := tx.g.Create(&row).Error; err != nil {
		if isUniqueViolation(err) {
			return k, bullpen.Errorf(bullpen.ECONFLICT, "routine %d already ticked at %s", k.RoutineID, k.DueAt.UTC().Format(time.RFC3339))
		}
		return k, fmt.Errorf("store: insert tick: %w", err)
	}
	return row.toTick(), nil
}

func (r *tickRow) toTick() bullpen.RoutineTick {
	return bullpen.RoutineTick{ID: r.ID, RoutineID: r.RoutineID, DueAt: r.DueAt.UTC(), State: r.State, Reason: r.Reason,
		Missed: r.Missed, MessageID: deref(r.MessageID), TaskID: deref(r.TaskID), CreatedAt: r.CreatedAt.UTC()}
}

// RoutineTicks lists a routine's latest ticks, newest first.
func (db *DB) RoutineTicks(ctx context.Context, routineID int64, limit int) ([]bullpen.RoutineTick, error) {
	var rows []tickRow
	if err := db.read(ctx).Where("routine_id = ?", routineID).Order("due_at DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: routine ticks: %w", err)
	}
	out := make([]bullpen.RoutineTick, len(rows))
	for i := range rows {
		out[i] = rows[i].toTick()
	}
	return out, nil
}

// LatestMessageID returns the newest message's ID in a channel, 0 when
// it has none.
func (tx *Tx) LatestMessageID(channelID int64) (int64, error) {
	var id *int64
	if err := tx.g.Model(&messageRow{}).Where("channel_id = ?", channelID).Select("MAX(id)").Scan(&id).Error; err != nil {
		return 0, fmt.Errorf("store: latest message: %w", err)
	}
	return deref(id), nil
}
