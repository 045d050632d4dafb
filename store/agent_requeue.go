package store

import (
	"fmt"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
)

// RequeueTurn abandons one running turn of owner's and puts its claimed
// wakes back to pending, so that the owner's worker claims them again at
// once (a turn a database outage cut off). It reports whether the turn
// was still running under owner: false means it finished or another
// process reclaimed it, and nothing changed.
func (tx *Tx) RequeueTurn(turnID int64, owner string) (bool, error) {
	res := tx.g.Model(&turnRow{}).Where("id = ? AND owner = ? AND state = ?", turnID, owner, bullpen.TurnRunning).
		Updates(map[string]any{"state": bullpen.TurnAbandoned, "finished_at": tx.now,
			"error": "cut off by a database outage; wakes re-queued"})
	if res.Error != nil {
		return false, fmt.Errorf("store: requeue turn: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return false, nil
	}
	err := tx.g.Model(&wakeRow{}).Where("turn_id = ? AND state = ?", turnID, bullpen.WakeClaimed).
		Updates(map[string]any{"state": bullpen.WakePending, "turn_id": gorm.Expr("NULL")}).Error
	if err != nil {
		return false, fmt.Errorf("store: requeue wakes: %w", err)
	}
	return true, nil
}
