package store

import (
	"fmt"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
)

// TurnTokens are one model call's tokens, added to its turn's totals.
type TurnTokens struct {
	Input, CachedInput, CacheWrite, Output int
}

// AddTurnTokens adds one model call's tokens to a running turn and counts
// the call as a step: the counts of a CLI turn grow as its model calls
// pass the gateway, so the day's budget sees them at once. ECONFLICT when
// the turn is no longer running.
func (tx *Tx) AddTurnTokens(turnID int64, t TurnTokens) error {
	res := tx.g.Model(&turnRow{}).Where("id = ? AND state = ?", turnID, bullpen.TurnRunning).Updates(map[string]any{
		"input_tokens":        gorm.Expr("input_tokens + ?", t.Input),
		"cached_input_tokens": gorm.Expr("cached_input_tokens + ?", t.CachedInput),
		"cache_write_tokens":  gorm.Expr("cache_write_tokens + ?", t.CacheWrite),
		"output_tokens":       gorm.Expr("output_tokens + ?", t.Output),
		"steps":               gorm.Expr("steps + 1"),
	})
	if res.Error != nil {
		return fmt.Errorf("store: add turn tokens: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.Errorf(bullpen.ECONFLICT, "turn %d is no longer running", turnID)
	}
	return nil
}
