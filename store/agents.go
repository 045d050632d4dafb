package store

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm/clause"
)

type agentRow struct {
	MemberID  int64 `gorm:"primaryKey;autoIncrement:false"`
	Role      string
	Spec      string
	State     string
	CreatedAt time.Time
	UpdatedAt time.Time
	FiredAt   *time.Time
}

func (agentRow) TableName() string { return "agents" }

func (r *agentRow) toAgent() bullpen.Agent {
	return bullpen.Agent{MemberID: r.MemberID, Role: r.Role, Spec: r.Spec, State: r.State,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), FiredAt: utcPtr(r.FiredAt)}
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// CreateAgent stores the agent part of a member created in the same tx.
func (tx *Tx) CreateAgent(a bullpen.Agent) (bullpen.Agent, error) {
	row := agentRow{MemberID: a.MemberID, Role: a.Role, Spec: a.Spec, State: bullpen.AgentActive, CreatedAt: tx.now, UpdatedAt: tx.now}
	if err := tx.g.Create(&row).Error; err != nil {
		return bullpen.Agent{}, fmt.Errorf("store: insert agent: %w", err)
	}
	return row.toAgent(), nil
}

// UpdateAgent replaces an agent's role name and spec.
func (tx *Tx) UpdateAgent(memberID int64, role, spec string) error {
	res := tx.g.Model(&agentRow{}).Where("member_id = ?", memberID).
		Updates(map[string]any{"role": role, "spec": spec, "updated_at": tx.now})
	if res.Error != nil {
		return fmt.Errorf("store: update agent: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.Errorf(bullpen.ENOTFOUND, "agent %d not found", memberID)
	}
	return nil
}

// FireAgent marks an agent fired, revokes its tokens and drops its pending
// wakes. Its messages and turns stay.
func (tx *Tx) FireAgent(memberID int64) error {
	res := tx.g.Model(&agentRow{}).Where("member_id = ? AND state = ?", memberID, bullpen.AgentActive).
		Updates(map[string]any{"state": bullpen.AgentFired, "fired_at": tx.now, "updated_at": tx.now})
	if res.Error != nil {
		return fmt.Errorf("store: fire agent: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.Errorf(bullpen.ENOTFOUND, "no active agent %d", memberID)
	}
	if err := tx.revokeTokens(memberID); err != nil {
		return err
	}
	return tx.g.Model(&wakeRow{}).Where("agent_id = ? AND state = ?", memberID, bullpen.WakePending).
		Updates(map[string]any{"state": bullpen.WakeDropped, "done_at": tx.now}).Error
}

// Agent returns an agent by member ID.
func (db *DB) Agent(ctx context.Context, memberID int64) (bullpen.Agent, error) {
	var row agentRow
	if err := db.read(ctx).Where("member_id = ?", memberID).First(&row).Error; err != nil {
		return bullpen.Agent{}, notFound(err, "agent %d not found", memberID)
	}
	return row.toAgent(), nil
}

// Agents returns every agent, fired ones included, by member ID.
func (db *DB) Agents(ctx context.Context) ([]bullpen.Agent, error) {
	var rows []agentRow
	if err := db.read(ctx).Order("member_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list agents: %w", err)
	}
	out := make([]bullpen.Agent, len(rows))
	for i := range rows {
		out[i] = rows[i].toAgent()
	}
	return out, nil
}

type cursorRow struct {
	Name string `gorm:"primaryKey"`
	Seq  int64
}

func (cursorRow) TableName() string { return "agent_cursors" }

// SetCursor records how far the named event consumer has got.
func (tx *Tx) SetCursor(name string, seq int64) error {
	err := tx.g.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "name"}},
		DoUpdates: clause.AssignmentColumns([]string{"seq"})}).Create(&cursorRow{Name: name, Seq: seq}).Error
	if err != nil {
		return fmt.Errorf("store: set cursor %s: %w", name, err)
	}
	return nil
}

// Cursor returns the named consumer's position; ENOTFOUND when it never ran.
func (db *DB) Cursor(ctx context.Context, name string) (int64, error) {
	var row cursorRow
	if err := db.read(ctx).Where("name = ?", name).First(&row).Error; err != nil {
		return 0, notFound(err, "cursor %s not set", name)
	}
	return row.Seq, nil
}

// FiredAgentMembers returns the member IDs of the fired agents, without
// reading any agent's spec (Agents decodes every one).
func (db *DB) FiredAgentMembers(ctx context.Context) (map[int64]bool, error) {
	var ids []int64
	if err := db.read(ctx).Model(&agentRow{}).Where("state = ?", string(bullpen.AgentFired)).Pluck("member_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("store: fired agents: %w", err)
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// AgentStates returns each agent's state by member ID, without reading
// any agent's spec.
func (db *DB) AgentStates(ctx context.Context) (map[int64]string, error) {
	var rows []struct {
		MemberID int64
		State    string
	}
	if err := db.read(ctx).Model(&agentRow{}).Select("member_id, state").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: agent states: %w", err)
	}
	out := make(map[int64]string, len(rows))
	for _, r := range rows {
		out[r.MemberID] = r.State
	}
	return out, nil
}
