package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/bullpen-hq/bullpen"
)

// gatewayResponseRow is a Responses answer the model gateway keeps for
// previous_response_id (gateway.ResponseStore).
type gatewayResponseRow struct {
	ID        string `gorm:"primaryKey"`
	AgentID   int64
	TurnID    int64
	Items     string
	CreatedAt time.Time
}

func (gatewayResponseRow) TableName() string { return "gateway_responses" }

// PutResponse keeps a response's conversation (a JSON array of items)
// under its id, for the agent whose turn made it; the same id again
// replaces it.
func (db *DB) PutResponse(ctx context.Context, id string, agentID, turnID int64, items []byte) error {
	_, err := db.Transact(ctx, func(tx *Tx) error {
		row := gatewayResponseRow{ID: id, AgentID: agentID, TurnID: turnID, Items: string(items), CreatedAt: tx.now}
		return tx.g.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}},
			DoUpdates: clause.AssignmentColumns([]string{"agent_id", "turn_id", "items", "created_at"})}).Create(&row).Error
	})
	if err != nil {
		return fmt.Errorf("store: put gateway response: %w", err)
	}
	return nil
}

// GetResponse returns the conversation kept under id for agentID. An id
// that is unknown, or another agent's, is ENOTFOUND alike.
func (db *DB) GetResponse(ctx context.Context, agentID int64, id string) ([]byte, error) {
	var row gatewayResponseRow
	err := db.read(ctx).Where("id = ? AND agent_id = ?", id, agentID).First(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, bullpen.Errorf(bullpen.ENOTFOUND, "no response %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: gateway response: %w", err)
	}
	return []byte(row.Items), nil
}
