package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// memoryRow is one entry of an agent's memory (memory_entries).
type memoryRow struct {
	ID             int64 `gorm:"primaryKey"`
	AgentID        int64
	Text           string
	Kind           string
	SourceKind     string
	SourceID       int64
	WikiPage       string
	ChannelID      int64
	Pinned         bool
	AuthorID       int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	LastRecalledAt *time.Time
	RecallCount    int
	ProposedTo     int64
}

func (memoryRow) TableName() string { return "memory_entries" }

// memoryCols are the columns read back (PostgreSQL's search vector is
// left out).
var memoryCols = []string{"id", "agent_id", "text", "kind", "source_kind", "source_id", "wiki_page", "channel_id",
	"pinned", "author_id", "created_at", "updated_at", "last_recalled_at", "recall_count", "proposed_to"}

func (r memoryRow) entry() bullpen.MemoryEntry {
	e := bullpen.MemoryEntry{ID: r.ID, AgentID: r.AgentID, Text: r.Text, Kind: r.Kind, SourceKind: r.SourceKind,
		SourceID: r.SourceID, WikiPage: r.WikiPage, ChannelID: r.ChannelID, Pinned: r.Pinned, AuthorID: r.AuthorID,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), RecallCount: r.RecallCount, ProposedTo: r.ProposedTo}
	if r.LastRecalledAt != nil {
		t := r.LastRecalledAt.UTC()
		e.LastRecalledAt = &t
	}
	return e
}

type memoryHistoryRow struct {
	ID         int64 `gorm:"primaryKey"`
	AgentID    int64
	EntryID    int64
	Action     string
	ActorID    int64
	BeforeText string
	AfterText  string
	CreatedAt  time.Time
}

func (memoryHistoryRow) TableName() string { return "memory_history" }

type memoryRecallRow struct {
	TurnID  int64 `gorm:"primaryKey"`
	EntryID int64 `gorm:"primaryKey"`
	Score   float64
	Why     string
	Tokens  int
}

func (memoryRecallRow) TableName() string { return "memory_recalls" }

// CreateMemory stores a new entry as given (validated by the caller); its
// created and updated times are the transaction's.
func (tx *Tx) CreateMemory(e bullpen.MemoryEntry) (bullpen.MemoryEntry, error) {
	row := memoryRow{AgentID: e.AgentID, Text: e.Text, Kind: e.Kind, SourceKind: e.SourceKind, SourceID: e.SourceID,
		WikiPage: e.WikiPage, ChannelID: e.ChannelID, Pinned: e.Pinned, AuthorID: e.AuthorID,
		CreatedAt: tx.now, UpdatedAt: tx.now, RecallCount: e.RecallCount, ProposedTo: e.ProposedTo}
	if err := tx.g.Select(memoryCols[1:]).Create(&row).Error; err != nil {
		return bullpen.MemoryEntry{}, fmt.Errorf("store: create memory: %w", err)
	}
	return row.entry(), nil
}

// Memory returns one entry; ENOTFOUND when there is none.
func (db *DB) Memory(ctx context.Context, id int64) (bullpen.MemoryEntry, error) {
	return memoryByID(db.read(ctx), id)
}

// Memory returns one entry inside the transaction.
func (tx *Tx) Memory(id int64) (bullpen.MemoryEntry, error) { return memoryByID(tx.g, id) }

func memoryByID(g *gorm.DB, id int64) (bullpen.MemoryEntry, error) {
	var row memoryRow
	err := g.Select(memoryCols).Where("id = ?", id).First(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return bullpen.MemoryEntry{}, bullpen.Errorf(bullpen.ENOTFOUND, "memory entry %d not found", id)
	}
	if err != nil {
		return bullpen.MemoryEntry{}, fmt.Errorf("store: memory %d: %w", id, err)
	}
	return row.entry(), nil
}

// ConfirmMemory makes a proposed entry count, with text when not nil.
func (tx *Tx) ConfirmMemory(id int64, text *string) (bullpen.MemoryEntry, error) {
	set := map[string]any{"updated_at": tx.now, "proposed_to": 0}
	if text != nil {
		set["text"] = *text
		clearEmbedding(set)
	}
	if err := tx.g.Model(&memoryRow{}).Where("id = ?", id).Updates(set).Error; err != nil {
		return bullpen.MemoryEntry{}, fmt.Errorf("store: confirm memory %d: %w", id, err)
	}
	return tx.Memory(id)
}

// UpdateMemory changes an entry's text, kind and pin as u says.
func (tx *Tx) UpdateMemory(id int64, u bullpen.MemoryUpdate) (bullpen.MemoryEntry, error) {
	set := map[string]any{"updated_at": tx.now}
	if u.Text != nil {
		set["text"] = *u.Text
		clearEmbedding(set)
	}
	if u.Kind != nil {
		set["kind"] = *u.Kind
	}
	if u.Pinned != nil {
		set["pinned"] = *u.Pinned
	}
	res := tx.g.Model(&memoryRow{}).Where("id = ?", id).Updates(set)
	if res.Error != nil {
		return bullpen.MemoryEntry{}, fmt.Errorf("store: update memory %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.MemoryEntry{}, bullpen.Errorf(bullpen.ENOTFOUND, "memory entry %d not found", id)
	}
	return tx.Memory(id)
}

// DeleteMemory removes an entry for real and records h (who, when, and
// for merges and expiries the text before and after).
func (tx *Tx) DeleteMemory(id int64, h bullpen.MemoryHistory) error {
	res := tx.g.Where("id = ?", id).Delete(&memoryRow{})
	if res.Error != nil {
		return fmt.Errorf("store: delete memory %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.Errorf(bullpen.ENOTFOUND, "memory entry %d not found", id)
	}
	h.EntryID = id
	return tx.AddMemoryHistory(h)
}

// AddMemoryHistory records a change to an agent's memory.
func (tx *Tx) AddMemoryHistory(h bullpen.MemoryHistory) error {
	row := memoryHistoryRow{AgentID: h.AgentID, EntryID: h.EntryID, Action: h.Action, ActorID: h.ActorID,
		BeforeText: h.Before, AfterText: h.After, CreatedAt: tx.now}
	if err := tx.g.Create(&row).Error; err != nil {
		return fmt.Errorf("store: memory history: %w", err)
	}
	return nil
}

// MemoryHistory returns an agent's memory history, newest first.
func (db *DB) MemoryHistory(ctx context.Context, agentID int64, limit int) ([]bullpen.MemoryHistory, error) {
	var rows []memoryHistoryRow
	if err := db.read(ctx).Where("agent_id = ?", agentID).Order("id DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: memory history: %w", err)
	}
	out := make([]bullpen.MemoryHistory, len(rows))
	for i, r := range rows {
		out[i] = bullpen.MemoryHistory{ID: r.ID, AgentID: r.AgentID, EntryID: r.EntryID, Action: r.Action,
			ActorID: r.ActorID, Before: r.BeforeText, After: r.AfterText, CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}

// MemoryEntries lists an agent's entries, newest first, of one kind or
// pinned when o says so (o.Query is not used here: see MemorySearch).
func (db *DB) MemoryEntries(ctx context.Context, agentID int64, o bullpen.MemoryListOptions) ([]bullpen.MemoryEntry, error) {
	g := db.read(ctx).Select(memoryCols).Where("agent_id = ?", agentID)
	if o.Kind != "" {
		g = g.Where("kind = ?", o.Kind)
	}
	if o.Pinned {
		g = g.Where("pinned = ?", true)
	}
	var rows []memoryRow
	if err := g.Order("id DESC").Limit(o.Limit).Offset(o.Offset).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: memory entries: %w", err)
	}
	return memoryEntries(rows), nil
}

// MemoryCount returns how many entries an agent has.
func (db *DB) MemoryCount(ctx context.Context, agentID int64) (int, error) {
	var n int64
	if err := db.read(ctx).Model(&memoryRow{}).Where("agent_id = ?", agentID).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("store: count memory: %w", err)
	}
	return int(n), nil
}

// PinnedMemory returns an agent's pinned entries that a turn in channel
// may recall (channel 0: all of them), oldest first.
func (db *DB) PinnedMemory(ctx context.Context, agentID, channel int64) ([]bullpen.MemoryEntry, error) {
	return pinnedOn(db.read(ctx), agentID, channel)
}

func pinnedOn(g *gorm.DB, agentID, channel int64) ([]bullpen.MemoryEntry, error) {
	g = g.Select(memoryCols).Where("agent_id = ? AND pinned = ? AND proposed_to = 0", agentID, true)
	if channel >= 0 {
		g = g.Where("channel_id = 0 OR channel_id = ?", channel)
	}
	var rows []memoryRow
	if err := g.Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: pinned memory: %w", err)
	}
	return memoryEntries(rows), nil
}

func memoryEntries(rows []memoryRow) []bullpen.MemoryEntry {
	out := make([]bullpen.MemoryEntry, len(rows))
	for i, r := range rows {
		out[i] = r.entry()
	}
	return out
}

// MarkRecalled records the entries recalled into a turn: their recall
// counts and times, and the turn's recall rows with scores.
func (tx *Tx) MarkRecalled(turnID int64, recalls []bullpen.MemoryRecall) error {
	if len(recalls) == 0 {
		return nil
	}
	ids := make([]int64, len(recalls))
	rows := make([]memoryRecallRow, len(recalls))
	for i, r := range recalls {
		ids[i] = r.EntryID
		rows[i] = memoryRecallRow{TurnID: turnID, EntryID: r.EntryID, Score: r.Score, Why: r.Why, Tokens: r.Tokens}
	}
	err := tx.g.Model(&memoryRow{}).Where("id IN ?", ids).
		Updates(map[string]any{"last_recalled_at": tx.now, "recall_count": gorm.Expr("recall_count + 1")}).Error
	if err != nil {
		return fmt.Errorf("store: mark recalled: %w", err)
	}
	if turnID == 0 {
		return nil
	}
	// A turn cut off before its work packet was journaled recalls again
	// when it resumes: its first rows stand.
	if err := tx.g.Clauses(clause.OnConflict{DoNothing: true}).Create(&rows).Error; err != nil {
		return fmt.Errorf("store: record recalls of turn %d: %w", turnID, err)
	}
	return nil
}

// MemoryRecalls returns the entries recalled into a turn, best first,
// with the text of those not forgotten since.
func (db *DB) MemoryRecalls(ctx context.Context, turnID int64) ([]bullpen.MemoryRecall, error) {
	var rows []memoryRecallRow
	if err := db.read(ctx).Where("turn_id = ?", turnID).Order("score DESC, entry_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: memory recalls: %w", err)
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.EntryID
	}
	var entries []memoryRow
	if len(ids) > 0 {
		if err := db.read(ctx).Select(memoryCols).Where("id IN ?", ids).Find(&entries).Error; err != nil {
			return nil, fmt.Errorf("store: memory recalls: %w", err)
		}
	}
	byID := map[int64]memoryRow{}
	for _, e := range entries {
		byID[e.ID] = e
	}
	out := make([]bullpen.MemoryRecall, len(rows))
	for i, r := range rows {
		e := byID[r.EntryID]
		out[i] = bullpen.MemoryRecall{TurnID: r.TurnID, EntryID: r.EntryID, Score: r.Score, Why: r.Why, Tokens: r.Tokens,
			Text: e.Text, Kind: e.Kind}
	}
	return out, nil
}

// LeastUsedMemory returns up to n of an agent's unpinned entries, least
// used first: fewest recalls, longest unrecalled (never first), oldest.
func (db *DB) LeastUsedMemory(ctx context.Context, agentID int64, n int) ([]bullpen.MemoryEntry, error) {
	var rows []memoryRow
	err := db.read(ctx).Select(memoryCols).Where("agent_id = ? AND pinned = ?", agentID, false).
		Order("recall_count, CASE WHEN last_recalled_at IS NULL THEN 0 ELSE 1 END, last_recalled_at, id").
		Limit(n).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: least used memory: %w", err)
	}
	return memoryEntries(rows), nil
}
