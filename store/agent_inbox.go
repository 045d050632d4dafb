package store

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

type wakeRow struct {
	ID         int64 `gorm:"primaryKey"`
	AgentID    int64
	ChannelID  int64
	MessageID  *int64
	ApprovalID *int64
	Reason     string
	State      string
	TurnID     *int64
	CreatedAt  time.Time
	DoneAt     *time.Time
}

func (wakeRow) TableName() string { return "agent_wakes" }

func (r *wakeRow) toWake() bullpen.Wake {
	return bullpen.Wake{ID: r.ID, AgentID: r.AgentID, ChannelID: r.ChannelID, MessageID: deref(r.MessageID),
		ApprovalID: deref(r.ApprovalID), Reason: r.Reason, State: r.State, TurnID: deref(r.TurnID), CreatedAt: r.CreatedAt.UTC()}
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func ref(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

// CreateWakes stores pending wakes. A second wake of the same agent by the
// same message is ignored; the returned wakes are those stored.
func (tx *Tx) CreateWakes(ws []bullpen.Wake) ([]bullpen.Wake, error) {
	var out []bullpen.Wake
	for _, w := range ws {
		row := wakeRow{AgentID: w.AgentID, ChannelID: w.ChannelID, MessageID: ref(w.MessageID), ApprovalID: ref(w.ApprovalID),
			Reason: w.Reason, State: bullpen.WakePending, CreatedAt: tx.now}
		res := tx.g.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
		if res.Error != nil {
			return nil, fmt.Errorf("store: insert wake: %w", res.Error)
		}
		if res.RowsAffected > 0 {
			out = append(out, row.toWake())
		}
	}
	return out, nil
}

// PendingAgents returns the agents that have pending wakes.
func (db *DB) PendingAgents(ctx context.Context) ([]int64, error) {
	var ids []int64
	err := db.read(ctx).Model(&wakeRow{}).Where("state = ?", bullpen.WakePending).Distinct("agent_id").Pluck("agent_id", &ids).Error
	if err != nil {
		return nil, fmt.Errorf("store: pending agents: %w", err)
	}
	return ids, nil
}

// Wakes returns a turn's wakes, oldest first.
func (db *DB) Wakes(ctx context.Context, turnID int64) ([]bullpen.Wake, error) {
	var rows []wakeRow
	if err := db.read(ctx).Where("turn_id = ?", turnID).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: turn wakes: %w", err)
	}
	out := make([]bullpen.Wake, len(rows))
	for i := range rows {
		out[i] = rows[i].toWake()
	}
	return out, nil
}

type turnRow struct {
	ID                int64 `gorm:"primaryKey"`
	AgentID           int64
	ChannelID         int64
	State             string
	Owner             string
	LeaseUntil        time.Time
	Provider          string
	Model             string
	Steps             int
	InputTokens       int
	CachedInputTokens int
	CacheWriteTokens  int
	OutputTokens      int
	Error             string
	StartedAt         time.Time
	FinishedAt        *time.Time
}

func (turnRow) TableName() string { return "agent_turns" }

func (r *turnRow) toTurn() bullpen.Turn {
	return bullpen.Turn{ID: r.ID, AgentID: r.AgentID, ChannelID: r.ChannelID, State: r.State, Owner: r.Owner, LeaseUntil: r.LeaseUntil.UTC(),
		Provider: r.Provider, Model: r.Model, Steps: r.Steps, InputTokens: r.InputTokens, CachedInputTokens: r.CachedInputTokens,
		CacheWriteTokens: r.CacheWriteTokens, OutputTokens: r.OutputTokens, Error: r.Error, StartedAt: r.StartedAt.UTC(),
		FinishedAt: utcPtr(r.FinishedAt), ToolCalls: []bullpen.ToolCall{}}
}

// ClaimWakes starts a turn for an agent with its oldest pending wakes in
// one channel (up to max): the wakes are claimed by the new running turn,
// leased to owner until leaseUntil. ENOTFOUND when nothing is pending.
//
// With replicas on one PostgreSQL database the rows are locked FOR UPDATE
// SKIP LOCKED, and an agent whose turn runs in another live process (its
// lease not expired) is left to that process, whose worker claims the
// rest when its turn ends: an agent takes one turn at a time.
func (tx *Tx) ClaimWakes(agentID int64, owner string, leaseUntil time.Time, max int) (bullpen.Turn, []bullpen.Wake, error) {
	if err := tx.runningElsewhere(agentID, owner); err != nil {
		return bullpen.Turn{}, nil, err
	}
	return tx.takeWakes(agentID, owner, leaseUntil, max)
}

// runningElsewhere is ENOTFOUND when the agent has a turn running under
// another owner whose lease has not expired.
func (tx *Tx) runningElsewhere(agentID int64, owner string) error {
	var busy int64
	err := tx.g.Model(&turnRow{}).Where("agent_id = ? AND state = ? AND owner <> ? AND lease_until >= ?",
		agentID, bullpen.TurnRunning, owner, tx.now).Count(&busy).Error
	if err != nil {
		return fmt.Errorf("store: running turns: %w", err)
	}
	if busy > 0 {
		return bullpen.Errorf(bullpen.ENOTFOUND, "agent %d has a turn running elsewhere", agentID)
	}
	return nil
}

// takeWakes claims the agent's oldest pending wakes of one channel as a
// new running turn (ClaimWakes without its checks).
func (tx *Tx) takeWakes(agentID int64, owner string, leaseUntil time.Time, max int) (bullpen.Turn, []bullpen.Wake, error) {
	var first wakeRow
	err := tx.skipLocked().Where("agent_id = ? AND state = ?", agentID, bullpen.WakePending).Order("id").First(&first).Error
	if err != nil {
		return bullpen.Turn{}, nil, notFound(err, "no pending wakes for agent %d", agentID)
	}
	var rows []wakeRow
	err = tx.skipLocked().Where("agent_id = ? AND state = ? AND channel_id = ?", agentID, bullpen.WakePending, first.ChannelID).
		Order("id").Limit(max).Find(&rows).Error
	if err != nil {
		return bullpen.Turn{}, nil, fmt.Errorf("store: pending wakes: %w", err)
	}
	turn := turnRow{AgentID: agentID, ChannelID: first.ChannelID, State: bullpen.TurnRunning, Owner: owner,
		LeaseUntil: leaseUntil.UTC(), StartedAt: tx.now}
	if err := tx.g.Create(&turn).Error; err != nil {
		return bullpen.Turn{}, nil, fmt.Errorf("store: insert turn: %w", err)
	}
	ids := make([]int64, len(rows))
	wakes := make([]bullpen.Wake, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
		rows[i].State, rows[i].TurnID = bullpen.WakeClaimed, &turn.ID
		wakes[i] = rows[i].toWake()
	}
	err = tx.g.Model(&wakeRow{}).Where("id IN ?", ids).Updates(map[string]any{"state": bullpen.WakeClaimed, "turn_id": turn.ID}).Error
	if err != nil {
		return bullpen.Turn{}, nil, fmt.Errorf("store: claim wakes: %w", err)
	}
	return turn.toTurn(), wakes, nil
}

// skipLocked returns a query that locks the rows it reads and passes over
// rows another transaction has locked (PostgreSQL; SQLite has one writer).
func (tx *Tx) skipLocked() *gorm.DB {
	if tx.db.dialect != Postgres {
		return tx.g
	}
	return tx.g.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
}

// FinishTurn stores a turn's outcome and closes its wakes: done, or
// dropped when the turn was stopped before it could act on them. t's
// steps and tokens are ADDED to the turn's: the model calls that passed
// the gateway were charged to the row as each settled (some may settle
// concurrently with this, or after it), so t carries only what the
// process counted itself (the built-in loop's calls).
func (tx *Tx) FinishTurn(t bullpen.Turn, wakeState string) error {
	res := tx.g.Model(&turnRow{}).Where("id = ? AND state = ?", t.ID, bullpen.TurnRunning).Updates(map[string]any{
		"state": t.State, "provider": t.Provider, "model": t.Model, "steps": gorm.Expr("steps + ?", t.Steps),
		"input_tokens":        gorm.Expr("input_tokens + ?", t.InputTokens),
		"cached_input_tokens": gorm.Expr("cached_input_tokens + ?", t.CachedInputTokens),
		"cache_write_tokens":  gorm.Expr("cache_write_tokens + ?", t.CacheWriteTokens),
		"output_tokens":       gorm.Expr("output_tokens + ?", t.OutputTokens),
		"error":               tx.db.secrets.String(t.Error), "finished_at": tx.now})
	if res.Error != nil {
		return fmt.Errorf("store: finish turn: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		// Reclaimed after its lease ran out: another turn owns the wakes now.
		return bullpen.Errorf(bullpen.ECONFLICT, "turn %d is no longer running", t.ID)
	}
	return tx.g.Model(&wakeRow{}).Where("turn_id = ? AND state = ?", t.ID, bullpen.WakeClaimed).
		Updates(map[string]any{"state": wakeState, "done_at": tx.now}).Error
}

// RenewLease extends a running turn's lease; false when it is not running
// under owner any more.
func (tx *Tx) RenewLease(turnID int64, owner string, until time.Time) (bool, error) {
	res := tx.g.Model(&turnRow{}).Where("id = ? AND owner = ? AND state = ?", turnID, owner, bullpen.TurnRunning).
		Update("lease_until", until.UTC())
	if res.Error != nil {
		return false, fmt.Errorf("store: renew lease: %w", res.Error)
	}
	return res.RowsAffected > 0, nil
}

// ReclaimTurns abandons running turns whose lease has expired, or that
// belong to another owner when otherOwners is true (a restart of a
// single-process office), and puts their wakes back to pending. It returns
// the abandoned turns.
func (tx *Tx) ReclaimTurns(owner string, otherOwners bool) ([]bullpen.Turn, error) {
	q := tx.g.Where("state = ?", bullpen.TurnRunning)
	if otherOwners {
		q = q.Where("lease_until < ? OR owner <> ?", tx.now, owner)
	} else {
		q = q.Where("lease_until < ?", tx.now)
	}
	var rows []turnRow
	if err := q.Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: expired turns: %w", err)
	}
	out := make([]bullpen.Turn, len(rows))
	for i := range rows {
		err := tx.g.Model(&turnRow{}).Where("id = ?", rows[i].ID).
			Updates(map[string]any{"state": bullpen.TurnAbandoned, "finished_at": tx.now, "error": "worker stopped mid-turn; wakes re-queued"}).Error
		if err != nil {
			return nil, fmt.Errorf("store: abandon turn: %w", err)
		}
		err = tx.g.Model(&wakeRow{}).Where("turn_id = ? AND state = ?", rows[i].ID, bullpen.WakeClaimed).
			Updates(map[string]any{"state": bullpen.WakePending, "turn_id": gorm.Expr("NULL")}).Error
		if err != nil {
			return nil, fmt.Errorf("store: requeue wakes: %w", err)
		}
		rows[i].State = bullpen.TurnAbandoned
		out[i] = rows[i].toTurn()
	}
	return out, nil
}

// TurnUsage sums an agent's turns started since a time.
type TurnUsage struct {
	Turns  int64
	Tokens int64
}

// UsageSince returns how many turns an agent started since t and how many
// tokens (input + output) they used.
func (db *DB) UsageSince(ctx context.Context, agentID int64, t time.Time) (TurnUsage, error) {
	var u TurnUsage
	// An abandoned turn is not a turn for the rate (its wakes run again),
	// but the tokens it spent were spent (the reservation sweep charges
	// its calls cut off in flight).
	err := db.read(ctx).Model(&turnRow{}).Where("agent_id = ? AND started_at >= ?", agentID, t.UTC()).
		Select("COALESCE(SUM(CASE WHEN state <> ? THEN 1 ELSE 0 END), 0) AS turns, COALESCE(SUM(input_tokens + output_tokens), 0) AS tokens",
			bullpen.TurnAbandoned).Scan(&u).Error
	if err != nil {
		return u, fmt.Errorf("store: agent usage: %w", err)
	}
	return u, nil
}

// Turns returns an agent's latest turns, newest first, with tool calls.
func (db *DB) Turns(ctx context.Context, agentID int64, limit int) ([]bullpen.Turn, error) {
	var rows []turnRow
	if err := db.read(ctx).Where("agent_id = ?", agentID).Order("id DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list turns: %w", err)
	}
	out := make([]bullpen.Turn, len(rows))
	byID := map[int64]*bullpen.Turn{}
	ids := make([]int64, len(rows))
	for i := range rows {
		out[i] = rows[i].toTurn()
		byID[rows[i].ID] = &out[i]
		ids[i] = rows[i].ID
	}
	if len(ids) == 0 {
		return out, nil
	}
	var calls []toolCallRow
	if err := db.read(ctx).Where("turn_id IN ?", ids).Order("id").Find(&calls).Error; err != nil {
		return nil, fmt.Errorf("store: list tool calls: %w", err)
	}
	for i := range calls {
		t := byID[calls[i].TurnID]
		t.ToolCalls = append(t.ToolCalls, calls[i].toToolCall())
	}
	return out, nil
}

// Turn returns one turn without its tool calls.
func (db *DB) Turn(ctx context.Context, id int64) (bullpen.Turn, error) {
	var row turnRow
	if err := db.read(ctx).First(&row, id).Error; err != nil {
		return bullpen.Turn{}, notFound(err, "turn %d not found", id)
	}
	return row.toTurn(), nil
}

type toolCallRow struct {
	ID         int64 `gorm:"primaryKey"`
	TurnID     int64
	AgentID    int64
	CallID     string
	Name       string
	Arguments  string
	Result     string
	State      string
	StartedAt  time.Time
	DurationMs int64
}

func (toolCallRow) TableName() string { return "agent_tool_calls" }

func (r *toolCallRow) toToolCall() bullpen.ToolCall {
	return bullpen.ToolCall{ID: r.ID, TurnID: r.TurnID, AgentID: r.AgentID, CallID: r.CallID, Name: r.Name, Arguments: r.Arguments,
		Result: r.Result, State: r.State, StartedAt: r.StartedAt.UTC(), DurationMS: r.DurationMs}
}

// CreateToolCall records a tool call as running.
func (tx *Tx) CreateToolCall(c bullpen.ToolCall) (bullpen.ToolCall, error) {
	row := toolCallRow{TurnID: c.TurnID, AgentID: c.AgentID, CallID: c.CallID, Name: c.Name, Arguments: c.Arguments,
		State: "running", StartedAt: tx.now}
	if err := tx.g.Create(&row).Error; err != nil {
		return bullpen.ToolCall{}, fmt.Errorf("store: insert tool call: %w", err)
	}
	return row.toToolCall(), nil
}

// FinishToolCall stores a tool call's outcome: state ok, error or approval.
func (tx *Tx) FinishToolCall(c bullpen.ToolCall) error {
	err := tx.g.Model(&toolCallRow{}).Where("id = ?", c.ID).
		Updates(map[string]any{"state": c.State, "result": c.Result, "duration_ms": c.DurationMS}).Error
	if err != nil {
		return fmt.Errorf("store: finish tool call: %w", err)
	}
	return nil
}

// InboxCounts returns how many wakes are pending and claimed, office-wide.
func (db *DB) InboxCounts(ctx context.Context) (pending, claimed int64, err error) {
	type row struct {
		State string
		N     int64
	}
	var rows []row
	err = db.read(ctx).Model(&wakeRow{}).Select("state, COUNT(*) AS n").Where("state IN ?", []string{bullpen.WakePending, bullpen.WakeClaimed}).
		Group("state").Scan(&rows).Error
	if err != nil {
		return 0, 0, fmt.Errorf("store: inbox counts: %w", err)
	}
	for _, r := range rows {
		if r.State == bullpen.WakePending {
			pending = r.N
		} else {
			claimed = r.N
		}
	}
	return pending, claimed, nil
}
