package store

import (
	"fmt"

	"github.com/bullpen-hq/bullpen"
)

// QueuedWrites returns how many grouped writes wait for the committer, so
// that a test can fill a batch before letting it commit.
func (db *DB) QueuedWrites() int {
	db.group.mu.Lock()
	defer db.group.mu.Unlock()
	return len(db.group.queue)
}

// CreateRowsByGORM stores a message and an event the way GORM writes
// them, bypassing the prepared inserts, and returns their IDs.
func (tx *Tx) CreateRowsByGORM(channelID, authorID int64) (msgID, seq int64, err error) {
	m := messageRow{ChannelID: channelID, AuthorID: authorID, Body: "by gorm", Mentions: "ada", Source: "api", CreatedAt: tx.now}
	if err := tx.g.Create(&m).Error; err != nil {
		return 0, 0, err
	}
	s, err := tx.seq()
	if err != nil {
		return 0, 0, err
	}
	// of the kind hot_test emits
	e := eventRow{Seq: s, Type: bullpen.EventMemberUpdated, ChannelID: &channelID, ActorID: 0, Audience: "1,2", Payload: "{}", CreatedAt: tx.now}
	if err := tx.g.Create(&e).Error; err != nil {
		return 0, 0, err
	}
	return m.ID, e.Seq, nil
}

// RawRow returns a row's columns as the database stores them, as text.
func (db *DB) RawRow(query string, id int64) ([]string, error) {
	rows, err := db.gdb.Raw(query, id).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	for i := range vals {
		vals[i] = new(any)
	}
	if !rows.Next() {
		return nil, rows.Err()
	}
	if err := rows.Scan(vals...); err != nil {
		return nil, err
	}
	out := make([]string, len(cols))
	for i, v := range vals {
		out[i] = fmt.Sprintf("%T %v", *(v.(*any)), *(v.(*any)))
	}
	return out, nil
}
