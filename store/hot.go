package store

import (
	"context"
	"database/sql"
	"fmt"
)

// hotStmts are the inserts every post makes, prepared once on the pool
// so that a transaction reuses each connection's prepared statement
// instead of parsing the SQL again (SQLite, through modernc, has no
// statement cache of its own) and skips GORM's reflection. Everything
// else goes through GORM.
type hotStmts struct {
	message, event *sql.Stmt
	// reserve and flush write a grouped batch's rows on PostgreSQL
	// (events_batch.go); nil on SQLite, whose statements cost no round
	// trip.
	start, reserve, flush *sql.Stmt
}

// The column lists match messageRow and eventRow; TestHotInsertsMatchGORM
// compares the rows both ways write.
const (
	insertMessageSQL = `INSERT INTO messages (channel_id, author_id, thread_id, body, mentions, reply_count, source, created_at, edited_at, deleted_at, turn_id) ` +
		`VALUES (?, ?, ?, ?, ?, 0, ?, ?, NULL, NULL, ?) RETURNING id`
	insertEventSQL = `INSERT INTO events (type, channel_id, actor_id, audience, payload, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`
	// PostgreSQL numbers the event itself (Tx.seq).
	insertEventSeqSQL = `INSERT INTO events (seq, type, channel_id, actor_id, audience, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`
)

// prepareHot prepares the hot inserts for the dialect.
func (db *DB) prepareHot(ctx context.Context) error {
	sqlDB, err := db.gdb.DB()
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	msgSQL, evSQL := insertMessageSQL, insertEventSQL
	if db.dialect == Postgres {
		msgSQL = `INSERT INTO messages (channel_id, author_id, thread_id, body, mentions, reply_count, source, created_at, edited_at, deleted_at, turn_id) ` +
			`VALUES ($1, $2, $3, $4, $5, 0, $6, $7, NULL, NULL, $8) RETURNING id`
		evSQL = insertEventSeqSQL
	}
	h := &hotStmts{}
	if h.message, err = sqlDB.PrepareContext(ctx, msgSQL); err != nil {
		return fmt.Errorf("store: prepare message insert: %w", err)
	}
	if h.event, err = sqlDB.PrepareContext(ctx, evSQL); err != nil {
		h.message.Close()
		return fmt.Errorf("store: prepare event insert: %w", err)
	}
	db.hot = h
	if db.dialect != Postgres {
		return nil
	}
	prepare := func(q string) (*sql.Stmt, error) { return sqlDB.PrepareContext(ctx, q) }
	if err := preparedBatch(prepare, h); err != nil {
		db.closeHot()
		db.hot = nil
		return err
	}
	return db.hookBatch()
}

// sqlTx returns the transaction under GORM, nil if there is none.
func (tx *Tx) sqlTx() *sql.Tx {
	t, _ := tx.g.Statement.ConnPool.(*sql.Tx)
	return t
}

// insertMessage stores row and sets its ID.
func (tx *Tx) insertMessage(row *messageRow) error {
	if b := tx.batch; b != nil {
		id, err := b.messageID()
		if err != nil {
			return err
		}
		row.ID = id
		b.messages = append(b.messages, *row)
		return nil
	}
	t := tx.sqlTx()
	if t == nil || tx.db.hot == nil {
		return tx.g.Create(row).Error
	}
	tx.db.statements.Add(1)
	ctx := tx.g.Statement.Context
	return t.StmtContext(ctx, tx.db.hot.message).QueryRowContext(ctx, row.ChannelID, row.AuthorID, row.ThreadID,
		row.Body, row.Mentions, row.Source, row.CreatedAt, row.TurnID).Scan(&row.ID)
}

// insertEvent stores row; on SQLite it sets its sequence.
func (tx *Tx) insertEvent(row *eventRow) error {
	if b := tx.batch; b != nil && row.Seq != 0 {
		b.events = append(b.events, *row)
		return nil
	}
	t := tx.sqlTx()
	if t == nil || tx.db.hot == nil {
		return tx.g.Create(row).Error
	}
	tx.db.statements.Add(1)
	ctx := tx.g.Statement.Context
	st := t.StmtContext(ctx, tx.db.hot.event)
	if tx.db.dialect == Postgres {
		_, err := st.ExecContext(ctx, row.Seq, row.Type, row.ChannelID, row.ActorID, row.Audience, row.Payload, row.CreatedAt)
		return err
	}
	return st.QueryRowContext(ctx, row.Type, row.ChannelID, row.ActorID, row.Audience, row.Payload, row.CreatedAt).Scan(&row.Seq)
}

// closeHot releases the prepared statements.
func (db *DB) closeHot() {
	if db.hot != nil {
		for _, st := range []*sql.Stmt{db.hot.message, db.hot.event, db.hot.start, db.hot.reserve, db.hot.flush} {
			if st != nil {
				st.Close()
			}
		}
	}
}
