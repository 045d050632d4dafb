package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// cliSessionRow is the CLI session an agent's runtime last used.
type cliSessionRow struct {
	AgentID   int64  `gorm:"primaryKey"`
	Runtime   string `gorm:"primaryKey"`
	SessionID string
	TurnID    int64
	UpdatedAt time.Time
}

func (cliSessionRow) TableName() string { return "agent_cli_sessions" }

// CLISession returns the session id the agent's runtime last reported; ""
// when there is none.
func (db *DB) CLISession(ctx context.Context, agentID int64, runtime string) (string, error) {
	var row cliSessionRow
	err := db.read(ctx).Where("agent_id = ? AND runtime = ?", agentID, runtime).First(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: cli session: %w", err)
	}
	return row.SessionID, nil
}

// SaveCLISession records the session id a turn's CLI run reported,
// replacing the agent's previous one for that runtime.
func (tx *Tx) SaveCLISession(agentID int64, runtime, session string, turnID int64) error {
	row := cliSessionRow{AgentID: agentID, Runtime: runtime, SessionID: session, TurnID: turnID, UpdatedAt: tx.now}
	err := tx.g.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "agent_id"}, {Name: "runtime"}},
		DoUpdates: clause.AssignmentColumns([]string{"session_id", "turn_id", "updated_at"})}).Create(&row).Error
	if err != nil {
		return fmt.Errorf("store: save cli session: %w", err)
	}
	return nil
}
