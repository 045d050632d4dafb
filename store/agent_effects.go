package store

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Step is one entry of a turn's journal: a model answer, a tool call's
// outcome, an effect done. Anchor is the turn's oldest wake, which every
// re-run of the turn after a crash shares; Key names the step within it.
type Step struct {
	Anchor  int64
	TurnID  int64
	Key     string
	Payload string
}

type stepRow struct {
	ID           int64 `gorm:"primaryKey"`
	AnchorWakeID int64
	TurnID       int64
	StepKey      string
	Payload      string
	CreatedAt    time.Time
}

func (stepRow) TableName() string { return "agent_turn_steps" }

// RecordStep stores a step in tx. A step whose key was already recorded is
// ECONFLICT, so an effect written in the same transaction rolls back: that
// is what makes office effects happen once even if two runs race.
func (tx *Tx) RecordStep(s Step) error {
	row := stepRow{AnchorWakeID: s.Anchor, TurnID: s.TurnID, StepKey: s.Key, Payload: s.Payload, CreatedAt: tx.now}
	if err := tx.g.Create(&row).Error; err != nil {
		if isUniqueViolation(err) {
			return bullpen.Errorf(bullpen.ECONFLICT, "step %s of wake %d was already done", s.Key, s.Anchor)
		}
		return fmt.Errorf("store: insert turn step: %w", err)
	}
	return nil
}

// NoteStep stores a step unless its key exists: for outcomes without an
// effect of their own (reads, a sandbox command's result).
func (tx *Tx) NoteStep(s Step) error {
	row := stepRow{AnchorWakeID: s.Anchor, TurnID: s.TurnID, StepKey: s.Key, Payload: s.Payload, CreatedAt: tx.now}
	if err := tx.g.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
		return fmt.Errorf("store: insert turn step: %w", err)
	}
	return nil
}

// Steps returns the journal of an anchor wake, by key.
func (db *DB) Steps(ctx context.Context, anchor int64) (map[string]Step, error) {
	var rows []stepRow
	if err := db.read(ctx).Where("anchor_wake_id = ?", anchor).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: turn steps: %w", err)
	}
	out := make(map[string]Step, len(rows))
	for _, r := range rows {
		out[r.StepKey] = Step{Anchor: r.AnchorWakeID, TurnID: r.TurnID, Key: r.StepKey, Payload: r.Payload}
	}
	return out, nil
}

// ReleaseWakes puts wakes a turn claimed back to pending: a resumed turn
// keeps to the wakes its first run saw, and later ones get their own turn.
func (tx *Tx) ReleaseWakes(turnID int64, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	err := tx.g.Model(&wakeRow{}).Where("turn_id = ? AND state = ? AND id IN ?", turnID, bullpen.WakeClaimed, ids).
		Updates(map[string]any{"state": bullpen.WakePending, "turn_id": gorm.Expr("NULL")}).Error
	if err != nil {
		return fmt.Errorf("store: release wakes: %w", err)
	}
	return nil
}

// InterruptToolCalls closes the tool calls an agent's abandoned turns left
// running, with result as their outcome, so the turn inspector does not
// show them running for ever.
func (tx *Tx) InterruptToolCalls(agentID int64, result string) error {
	abandoned := tx.g.Model(&turnRow{}).Select("id").Where("agent_id = ? AND state = ?", agentID, bullpen.TurnAbandoned)
	err := tx.g.Model(&toolCallRow{}).Where("agent_id = ? AND state = ? AND turn_id IN (?)", agentID, "running", abandoned).
		Updates(map[string]any{"state": "error", "result": result}).Error
	if err != nil {
		return fmt.Errorf("store: interrupt tool calls: %w", err)
	}
	return nil
}
