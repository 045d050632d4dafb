package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
)

type messageRow struct {
	ID         int64 `gorm:"primaryKey"`
	ChannelID  int64
	AuthorID   int64
	ThreadID   *int64
	Body       string
	Mentions   string
	ReplyCount int
	Source     string
	CreatedAt  time.Time
	EditedAt   *time.Time
	DeletedAt  *time.Time
	TurnID     *int64
}

func (messageRow) TableName() string { return "messages" }

type messageRevisionRow struct {
	ID         int64 `gorm:"primaryKey"`
	MessageID  int64
	Body       string
	ReplacedAt time.Time
}

func (messageRevisionRow) TableName() string { return "message_revisions" }

func (r *messageRow) toMessage() bullpen.Message {
	m := bullpen.Message{ID: r.ID, ChannelID: r.ChannelID, AuthorID: r.AuthorID, Body: r.Body,
		Mentions: []string{}, ReplyCount: r.ReplyCount, Source: r.Source, CreatedAt: r.CreatedAt.UTC(),
		Deleted: r.DeletedAt != nil, TurnID: deref(r.TurnID)}
	if r.ThreadID != nil {
		m.ThreadID = *r.ThreadID
	}
	if r.Mentions != "" {
		m.Mentions = strings.Split(r.Mentions, " ")
	}
	if r.EditedAt != nil {
		t := r.EditedAt.UTC()
		m.EditedAt = &t
	}
	return m
}

// CreateMessage inserts a message; a reply also bumps its root's reply count.
func (tx *Tx) CreateMessage(m bullpen.Message) (bullpen.Message, error) {
	row := messageRow{ChannelID: m.ChannelID, AuthorID: m.AuthorID, Body: tx.db.secrets.String(m.Body),
		Mentions: strings.Join(m.Mentions, " "), Source: m.Source, CreatedAt: tx.now, TurnID: ref(m.TurnID)}
	if m.ThreadID != 0 {
		row.ThreadID = &m.ThreadID
	}
	if err := tx.insertMessage(&row); err != nil {
		return bullpen.Message{}, fmt.Errorf("store: insert message: %w", err)
	}
	if m.ThreadID != 0 {
		err := tx.g.Model(&messageRow{}).Where("id = ?", m.ThreadID).
			UpdateColumn("reply_count", gorm.Expr("reply_count + 1")).Error
		if err != nil {
			return bullpen.Message{}, fmt.Errorf("store: count reply: %w", err)
		}
	}
	return row.toMessage(), nil
}

// UpdateMessageBody replaces a message's body and mentions, keeping the old
// body as a revision. deleted marks the message deleted.
func (tx *Tx) UpdateMessageBody(id int64, body string, mentions []string, deleted bool) (bullpen.Message, error) {
	var row messageRow
	if err := tx.g.First(&row, id).Error; err != nil {
		return bullpen.Message{}, notFound(err, "message %d not found", id)
	}
	rev := messageRevisionRow{MessageID: id, Body: row.Body, ReplacedAt: tx.now}
	if err := tx.g.Create(&rev).Error; err != nil {
		return bullpen.Message{}, fmt.Errorf("store: keep message revision: %w", err)
	}
	row.Body, row.Mentions = body, strings.Join(mentions, " ")
	if deleted {
		row.DeletedAt = &tx.now
	} else {
		row.EditedAt = &tx.now
	}
	if err := tx.g.Save(&row).Error; err != nil {
		return bullpen.Message{}, fmt.Errorf("store: update message: %w", err)
	}
	return row.toMessage(), nil
}

// Message returns a message by ID.
func (db *DB) Message(ctx context.Context, id int64) (bullpen.Message, error) {
	var row messageRow
	if err := db.read(ctx).First(&row, id).Error; err != nil {
		return bullpen.Message{}, notFound(err, "message %d not found", id)
	}
	return row.toMessage(), nil
}

// ChannelMessages returns up to limit root messages of a channel with
// id < before (0: the newest), oldest first, and whether older ones exist.
func (db *DB) ChannelMessages(ctx context.Context, channelID, before int64, limit int) ([]bullpen.Message, bool, error) {
	q := db.read(ctx).Where("channel_id = ? AND thread_id IS NULL", channelID)
	if before > 0 {
		q = q.Where("id < ?", before)
	}
	var rows []messageRow
	if err := q.Order("id DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return nil, false, fmt.Errorf("store: list messages: %w", err)
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	out := make([]bullpen.Message, len(rows))
	for i := range rows {
		out[len(rows)-1-i] = rows[i].toMessage()
	}
	return out, more, nil
}

// ThreadReplies returns up to limit replies to a root message, oldest first.
func (db *DB) ThreadReplies(ctx context.Context, rootID int64, limit int) ([]bullpen.Message, error) {
	var rows []messageRow
	err := db.read(ctx).Where("thread_id = ?", rootID).Order("id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: thread replies: %w", err)
	}
	out := make([]bullpen.Message, len(rows))
	for i := range rows {
		out[i] = rows[i].toMessage()
	}
	return out, nil
}

// MessageRevisions returns the earlier bodies of a message, oldest first.
func (db *DB) MessageRevisions(ctx context.Context, id int64) ([]string, error) {
	var bodies []string
	err := db.read(ctx).Model(&messageRevisionRow{}).Where("message_id = ?", id).Order("id").Pluck("body", &bodies).Error
	if err != nil {
		return nil, fmt.Errorf("store: message revisions: %w", err)
	}
	return bodies, nil
}

// CountMessages returns how many messages a channel holds (0: all channels).
func (db *DB) CountMessages(ctx context.Context, channelID int64) (int64, error) {
	q := db.read(ctx).Model(&messageRow{})
	if channelID != 0 {
		q = q.Where("channel_id = ?", channelID)
	}
	var n int64
	if err := q.Count(&n).Error; err != nil {
		return 0, fmt.Errorf("store: count messages: %w", err)
	}
	return n, nil
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
