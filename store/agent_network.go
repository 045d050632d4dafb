package store

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
)

type networkApprovalRow struct {
	AgentID    int64  `gorm:"primaryKey"`
	Policy     string `gorm:"primaryKey"`
	ApprovalID int64
	State      string
	AnsweredBy *int64
	AnsweredAt *time.Time
}

func (networkApprovalRow) TableName() string { return "agent_network_approvals" }

// AskNetwork records that approval approvalID asks a human for an agent
// CLI's network policy; the agent's rows for other policies go.
func (tx *Tx) AskNetwork(agentID int64, policy string, approvalID int64) error {
	if err := tx.ForgetNetwork(agentID); err != nil {
		return err
	}
	row := networkApprovalRow{AgentID: agentID, Policy: policy, ApprovalID: approvalID, State: bullpen.ApprovalPending}
	if err := tx.g.Create(&row).Error; err != nil {
		return fmt.Errorf("store: insert network approval: %w", err)
	}
	return nil
}

// AnswerNetwork stores a human's answer to a network approval request.
func (tx *Tx) AnswerNetwork(approvalID int64, state string, by int64) error {
	err := tx.g.Model(&networkApprovalRow{}).Where("approval_id = ?", approvalID).
		Updates(map[string]any{"state": state, "answered_by": by, "answered_at": tx.now}).Error
	if err != nil {
		return fmt.Errorf("store: answer network approval: %w", err)
	}
	return nil
}

// ForgetNetwork voids every network approval of an agent (its policy
// changed): a request still pending is closed as denied, so nobody
// approves a policy the agent no longer has.
func (tx *Tx) ForgetNetwork(agentID int64) error {
	voided := tx.g.Model(&networkApprovalRow{}).Select("approval_id").Where("agent_id = ?", agentID)
	if err := tx.g.Model(&approvalRow{}).Where("id IN (?) AND state = ?", voided, bullpen.ApprovalPending).
		Updates(map[string]any{"state": bullpen.ApprovalDenied, "note": "voided: the agent's network policy changed", "answered_at": tx.now}).Error; err != nil {
		return fmt.Errorf("store: void network approvals: %w", err)
	}
	if err := tx.g.Where("agent_id = ?", agentID).Delete(&networkApprovalRow{}).Error; err != nil {
		return fmt.Errorf("store: forget network approvals: %w", err)
	}
	return nil
}

// NetworkApproval returns where an agent's network policy stands;
// ENOTFOUND when no human was asked about it.
func (db *DB) NetworkApproval(ctx context.Context, agentID int64, policy string) (bullpen.NetworkApproval, error) {
	return networkApproval(db.read(ctx), agentID, policy)
}

// NetworkApproval is DB.NetworkApproval inside a transaction.
func (tx *Tx) NetworkApproval(agentID int64, policy string) (bullpen.NetworkApproval, error) {
	return networkApproval(tx.g, agentID, policy)
}

func networkApproval(g *gorm.DB, agentID int64, policy string) (bullpen.NetworkApproval, error) {
	var row networkApprovalRow
	if err := g.Where("agent_id = ? AND policy = ?", agentID, policy).First(&row).Error; err != nil {
		return bullpen.NetworkApproval{}, notFound(err, "no network approval for agent %d", agentID)
	}
	return bullpen.NetworkApproval{Policy: row.Policy, State: row.State, ApprovalID: row.ApprovalID,
		AnsweredBy: deref(row.AnsweredBy), AnsweredAt: utcPtr(row.AnsweredAt)}, nil
}
