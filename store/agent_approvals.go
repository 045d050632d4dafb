package store

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
)

type approvalRow struct {
	ID         int64 `gorm:"primaryKey"`
	AgentID    int64
	TurnID     *int64 // nil: asked outside a turn (a CLI's network policy at hire)
	ChannelID  *int64 // nil: asked outside a channel
	ThreadID   *int64
	Tool       string
	Arguments  string
	Reason     string
	State      string
	AnsweredBy *int64
	Note       string
	Result     string
	CreatedAt  time.Time
	AnsweredAt *time.Time
}

func (approvalRow) TableName() string { return "agent_approvals" }

func (r *approvalRow) toApproval() bullpen.Approval {
	return bullpen.Approval{ID: r.ID, AgentID: r.AgentID, TurnID: deref(r.TurnID), ChannelID: deref(r.ChannelID), ThreadID: deref(r.ThreadID),
		Tool: r.Tool, Arguments: r.Arguments, Reason: r.Reason, State: r.State, AnsweredBy: deref(r.AnsweredBy),
		Note: r.Note, Result: r.Result, CreatedAt: r.CreatedAt.UTC(), AnsweredAt: utcPtr(r.AnsweredAt)}
}

// CreateApproval stores a pending approval request.
func (tx *Tx) CreateApproval(a bullpen.Approval) (bullpen.Approval, error) {
	row := approvalRow{AgentID: a.AgentID, TurnID: ref(a.TurnID), ChannelID: ref(a.ChannelID), ThreadID: ref(a.ThreadID),
		Tool: a.Tool, Arguments: a.Arguments, Reason: a.Reason, State: bullpen.ApprovalPending, CreatedAt: tx.now}
	if err := tx.g.Create(&row).Error; err != nil {
		return bullpen.Approval{}, fmt.Errorf("store: insert approval: %w", err)
	}
	return row.toApproval(), nil
}

// AnswerApproval records a human's answer to a pending approval; an
// approval already answered is ECONFLICT.
func (tx *Tx) AnswerApproval(id int64, state string, by int64, note string) (bullpen.Approval, error) {
	res := tx.g.Model(&approvalRow{}).Where("id = ? AND state = ?", id, bullpen.ApprovalPending).
		Updates(map[string]any{"state": state, "answered_by": by, "note": note, "answered_at": tx.now})
	if res.Error != nil {
		return bullpen.Approval{}, fmt.Errorf("store: answer approval: %w", res.Error)
	}
	var row approvalRow
	if err := tx.g.First(&row, id).Error; err != nil {
		return bullpen.Approval{}, notFound(err, "approval %d not found", id)
	}
	if res.RowsAffected == 0 {
		return row.toApproval(), bullpen.Errorf(bullpen.ECONFLICT, "approval %d was already %s", id, row.State)
	}
	return row.toApproval(), nil
}

// SetApprovalResult stores what the approved call returned.
func (tx *Tx) SetApprovalResult(id int64, result string) error {
	if err := tx.g.Model(&approvalRow{}).Where("id = ?", id).Update("result", result).Error; err != nil {
		return fmt.Errorf("store: approval result: %w", err)
	}
	return nil
}

// Approval returns an approval by ID.
func (db *DB) Approval(ctx context.Context, id int64) (bullpen.Approval, error) {
	var row approvalRow
	if err := db.read(ctx).First(&row, id).Error; err != nil {
		return bullpen.Approval{}, notFound(err, "approval %d not found", id)
	}
	return row.toApproval(), nil
}

// Approvals lists approvals in a state ("" for all), newest first.
func (db *DB) Approvals(ctx context.Context, state string, limit int) ([]bullpen.Approval, error) {
	q := db.read(ctx).Order("id DESC").Limit(limit)
	if state != "" {
		q = q.Where("state = ?", state)
	}
	var rows []approvalRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list approvals: %w", err)
	}
	out := make([]bullpen.Approval, len(rows))
	for i := range rows {
		out[i] = rows[i].toApproval()
	}
	return out, nil
}
