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
	if err := tx.g.Model(&tokenRow{}).Where("member_id = ? AND revoked_at IS NULL", memberID).
		Update("revoked_at", tx.now).Error; err != nil {
		return fmt.Errorf("store: revoke agent tokens: %w", err)
	}
	return tx.g.Model(&wakeRow{}).Where("agent_id = ? AND state = ?", memberID, bullpen.WakePending).
		Updates(map[string]any{"state": bullpen.WakeDropped, "done_at": tx.now}).Error
}

// RevokeTokensNamed revokes a member's live tokens with the given name.
func (tx *Tx) RevokeTokensNamed(memberID int64, name string) error {
	err := tx.g.Model(&tokenRow{}).Where("member_id = ? AND name = ? AND revoked_at IS NULL", memberID, name).
		Update("revoked_at", tx.now).Error
	if err != nil {
		return fmt.Errorf("store: revoke tokens: %w", err)
	}
	return nil
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

// ChainMessage is what the hop budget needs of a message.
type ChainMessage struct {
	ID         int64
	AuthorID   int64
	AuthorKind string
	Source     string
}

// ChainTail returns up to limit messages of a conversation ending at
// message upto, newest first: the replies of thread threadID (and its
// root), or the channel's top-level messages when threadID is 0.
func (db *DB) ChainTail(ctx context.Context, channelID, threadID, upto int64, limit int) ([]ChainMessage, error) {
	q := db.read(ctx).Table("messages AS m").Joins("JOIN members AS a ON a.id = m.author_id").
		Select("m.id, m.author_id, a.kind AS author_kind, m.source").Where("m.id <= ?", upto)
	if threadID != 0 {
		q = q.Where("m.thread_id = ? OR m.id = ?", threadID, threadID)
	} else {
		q = q.Where("m.channel_id = ? AND m.thread_id IS NULL", channelID)
	}
	var out []ChainMessage
	if err := q.Order("m.id DESC").Limit(limit).Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("store: chain tail: %w", err)
	}
	return out, nil
}

// ThreadAuthors returns the distinct authors of a thread's root and replies.
func (db *DB) ThreadAuthors(ctx context.Context, rootID int64) ([]int64, error) {
	var ids []int64
	err := db.read(ctx).Model(&messageRow{}).Where("id = ? OR thread_id = ?", rootID, rootID).
		Distinct("author_id").Order("author_id").Pluck("author_id", &ids).Error
	if err != nil {
		return nil, fmt.Errorf("store: thread authors: %w", err)
	}
	return ids, nil
}

// RecentMessages returns up to limit messages before (0: the newest) of a
// channel's top level, or of a thread (root and replies) when threadID is
// set, oldest first.
func (db *DB) RecentMessages(ctx context.Context, channelID, threadID, before int64, limit int) ([]bullpen.Message, error) {
	q := db.read(ctx).Where("deleted_at IS NULL")
	if threadID != 0 {
		q = q.Where("id = ? OR thread_id = ?", threadID, threadID)
	} else {
		q = q.Where("channel_id = ? AND thread_id IS NULL", channelID)
	}
	if before > 0 {
		q = q.Where("id < ?", before)
	}
	var rows []messageRow
	if err := q.Order("id DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: recent messages: %w", err)
	}
	out := make([]bullpen.Message, len(rows))
	for i := range rows {
		out[len(rows)-1-i] = rows[i].toMessage()
	}
	return out, nil
}
