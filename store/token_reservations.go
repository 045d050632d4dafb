package store

import (
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
)

// budgetLockBase is the high half of the PostgreSQL advisory lock a
// reservation takes on its agent (the low half is the agent's id), so that
// two replicas reserving for one agent check the budgets one after the
// other.
const budgetLockBase = 7411

type reservationRow struct {
	ID           int64 `gorm:"primaryKey"`
	AgentID      int64
	TurnID       int64
	InputTokens  int
	OutputTokens int
	CreatedAt    time.Time
	ExpiresAt    time.Time
}

func (reservationRow) TableName() string { return "token_reservations" }

// Reservation is the worst case of one model call in flight.
type Reservation struct {
	ID, AgentID, TurnID int64
	Input, Output       int // tokens reserved: counted input, granted output
}

// ReserveTokens asks for a model call's tokens.
type ReserveTokens struct {
	AgentID, TurnID int64
	Input           int // the request's input, counted
	MaxOutput       int // the output the request asks for at most
	MinOutput       int // the least output worth a call (at least 1)
	TurnLimit       int // max_turn_tokens
	DailyLimit      int // daily_tokens
	DayStart        time.Time
	Expires         time.Time // the sweep charges the row in full after this
}

// ReserveResult is what ReserveTokens granted.
type ReserveResult struct {
	Reservation
	// Refused names the budget that has no room left ("turn" or "daily");
	// empty when the reservation was made.
	Refused string
	// TurnUsed and DayUsed are the tokens used and reserved before this
	// call: the turn's, and the agent's today (UTC).
	TurnUsed, DayUsed int64
}

// ReserveTokens reserves a call's input and as much of its output as both
// budgets leave (at most MaxOutput), counting what the turn and the agent
// used and what their calls in flight reserved. On PostgreSQL it holds the
// agent's advisory lock for the rest of the transaction. A turn that is not
// running is an EFORBIDDEN error.
func (tx *Tx) ReserveTokens(r ReserveTokens) (ReserveResult, error) {
	var res ReserveResult
	if tx.db.dialect == Postgres {
		if err := tx.g.Exec("SELECT pg_advisory_xact_lock(?)", int64(budgetLockBase)<<32|r.AgentID&0xffffffff).Error; err != nil {
			return res, fmt.Errorf("store: lock agent budget: %w", err)
		}
	}
	var turn turnRow
	if err := tx.g.Select("id", "state", "input_tokens", "output_tokens").Where("id = ?", r.TurnID).Take(&turn).Error; err != nil {
		return res, notFound(err, "turn %d not found", r.TurnID)
	}
	if turn.State != bullpen.TurnRunning {
		return res, bullpen.Errorf(bullpen.EFORBIDDEN, "turn %d has ended", r.TurnID)
	}
	turnReserved, err := tx.reservedSum("turn_id = ?", r.TurnID)
	if err != nil {
		return res, err
	}
	var day int64
	if err := tx.g.Model(&turnRow{}).Where("agent_id = ? AND started_at >= ?", r.AgentID, r.DayStart.UTC()).
		Select("COALESCE(SUM(input_tokens + output_tokens), 0)").Scan(&day).Error; err != nil {
		return res, fmt.Errorf("store: day's tokens: %w", err)
	}
	dayReserved, err := tx.reservedSum("agent_id = ?", r.AgentID)
	if err != nil {
		return res, err
	}
	res.TurnUsed = int64(turn.InputTokens+turn.OutputTokens) + turnReserved
	res.DayUsed = day + dayReserved
	turnLeft, dayLeft := int64(r.TurnLimit)-res.TurnUsed, int64(r.DailyLimit)-res.DayUsed
	left := min(turnLeft, dayLeft)
	out := min(int64(r.MaxOutput), left-int64(r.Input))
	if out < int64(max(r.MinOutput, 1)) {
		res.Refused = "turn"
		if dayLeft < turnLeft {
			res.Refused = "daily"
		}
		return res, nil
	}
	row := reservationRow{AgentID: r.AgentID, TurnID: r.TurnID, InputTokens: r.Input, OutputTokens: int(out),
		CreatedAt: tx.now, ExpiresAt: r.Expires.UTC()}
	if err := tx.g.Create(&row).Error; err != nil {
		return res, fmt.Errorf("store: reserve tokens: %w", err)
	}
	res.Reservation = Reservation{ID: row.ID, AgentID: r.AgentID, TurnID: r.TurnID, Input: r.Input, Output: int(out)}
	return res, nil
}

func (tx *Tx) reservedSum(where string, id int64) (int64, error) {
	var n int64
	if err := tx.g.Model(&reservationRow{}).Where(where, id).
		Select("COALESCE(SUM(input_tokens + output_tokens), 0)").Scan(&n).Error; err != nil {
		return 0, fmt.Errorf("store: reserved tokens: %w", err)
	}
	return n, nil
}

// SettleReservation ends a reservation: it is deleted, and t (the call's
// tokens) is added to its turn, whatever the turn's state, as one step
// unless t is zero (the provider refused the call). It reports false, and
// changes nothing, when the reservation was settled already (by the sweep).
func (tx *Tx) SettleReservation(id int64, t TurnTokens) (bool, error) {
	var row reservationRow
	if err := tx.g.Where("id = ?", id).Take(&row).Error; err != nil {
		if err == gorm.ErrRecordNotFound {
			return false, nil
		}
		return false, fmt.Errorf("store: read reservation: %w", err)
	}
	return true, tx.settle(row, t)
}

func (tx *Tx) settle(row reservationRow, t TurnTokens) error {
	res := tx.g.Where("id = ?", row.ID).Delete(&reservationRow{})
	if res.Error != nil {
		return fmt.Errorf("store: settle reservation: %w", res.Error)
	}
	if res.RowsAffected == 0 || t == (TurnTokens{}) {
		return nil
	}
	err := tx.g.Model(&turnRow{}).Where("id = ?", row.TurnID).Updates(map[string]any{
		"input_tokens":        gorm.Expr("input_tokens + ?", t.Input),
		"cached_input_tokens": gorm.Expr("cached_input_tokens + ?", t.CachedInput),
		"cache_write_tokens":  gorm.Expr("cache_write_tokens + ?", t.CacheWrite),
		"output_tokens":       gorm.Expr("output_tokens + ?", t.Output),
		"steps":               gorm.Expr("steps + 1"),
	}).Error
	if err != nil {
		return fmt.Errorf("store: charge turn %d: %w", row.TurnID, err)
	}
	return nil
}

// SweepReservations charges, at their full amount, the reservations whose
// process can no longer settle them: those past their expiry, and those
// older than grace whose turn is no longer running (its process died and
// the turn was abandoned, or it ended while a call was cut off). It
// returns them.
func (tx *Tx) SweepReservations(grace time.Duration) ([]Reservation, error) {
	ended := tx.g.Model(&turnRow{}).Select("id").Where("state <> ?", bullpen.TurnRunning)
	var rows []reservationRow
	err := tx.g.Where("expires_at < ? OR (created_at < ? AND turn_id IN (?))", tx.now, tx.now.Add(-grace), ended).
		Order("id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: expired reservations: %w", err)
	}
	out := make([]Reservation, len(rows))
	for i, r := range rows {
		if err := tx.settle(r, TurnTokens{Input: r.InputTokens, Output: r.OutputTokens}); err != nil {
			return nil, err
		}
		out[i] = Reservation{ID: r.ID, AgentID: r.AgentID, TurnID: r.TurnID, Input: r.InputTokens, Output: r.OutputTokens}
	}
	return out, nil
}
