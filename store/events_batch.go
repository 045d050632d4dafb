package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// rowBatch holds, on PostgreSQL, the messages and events of a grouped
// batch's writes until one statement writes them all: a post then costs
// no round trip of its own, a batch four (BEGIN, the lock with the
// reservation, the write, COMMIT) however many posts it holds. Message
// IDs come from the table's sequence, reserved a batch at a time, so
// that CreateMessage still returns its message's ID at once; event
// sequence numbers are Tx.seq's, as for a single write. The rows are
// written before the transaction's next other statement (flushHook), so
// that a write reading or referencing them finds them, and before its
// commit. Should that one statement fail, the batch runs again with a
// savepoint and single inserts per write (group.go), so that only the
// failing write fails.
type rowBatch struct {
	tx *Tx
	// left is how many writes of the batch, the running one included,
	// have yet to run: the message IDs worth reserving.
	left     int
	ids      []int64 // reserved message IDs not used yet
	messages []messageRow
	events   []eventRow
}

const (
	// reserveSQL runs under the writers' advisory lock (begin), so the
	// highest sequence it reads is final, as in Tx.seq.
	reserveSQL = `SELECT (SELECT COALESCE(MAX(seq), 0) FROM events), ` +
		`(SELECT COALESCE(string_agg(nextval('messages_id_seq')::text, ','), '') FROM generate_series(1, $1))`
	// flushSQL writes the batch's rows from arrays, one prepared
	// statement for every batch size, and announces the last event when
	// $18 is set; the data-modifying CTEs run to completion whatever the
	// SELECT reads. The column lists match messageRow and eventRow
	// (TestBatchInsertsMatchGORM).
	flushSQL = `WITH m AS (INSERT INTO messages (id, channel_id, author_id, thread_id, body, mentions, reply_count, source, created_at, edited_at, deleted_at, turn_id) ` +
		`SELECT u.id, u.ch, u.au, u.th, u.bo, u.me, 0, u.so, u.at, NULL, NULL, u.tu FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::bigint[]) AS u(id, ch, au, th, bo, me, so, at, tu)), ` +
		`e AS (INSERT INTO events (seq, type, channel_id, actor_id, audience, payload, created_at) ` +
		`SELECT * FROM unnest($10::bigint[], $11::text[], $12::bigint[], $13::bigint[], $14::text[], $15::text[], $16::timestamptz[])) ` +
		`SELECT pg_notify($17, $19) WHERE $18::bool`
)

// startSQL takes the writers' advisory lock, then reads the highest
// sequence and reserves message IDs (migration 0012): begin's lock and
// reserveSQL in one round trip.
const startSQL = `SELECT max_seq, message_ids FROM bullpen_batch_start($1, $2)`

// beginBatch opens, on PostgreSQL, the transaction of a grouped batch
// of n writes, which holds their rows for one write.
func (db *DB) beginBatch(n int) (*Tx, error) {
	tx, err := db.open(context.Background())
	if err != nil {
		return nil, err
	}
	tx.batch = &rowBatch{tx: tx, left: n}
	tx.marks.batch = tx.batch
	if err := tx.batch.start(n); err != nil {
		tx.g.Rollback()
		return nil, err
	}
	return tx, nil
}

// start locks and reserves n message IDs and the next sequence.
func (b *rowBatch) start(n int) error {
	return b.take("lock events, reserve message ids", b.tx.db.hot.start, n, eventLockKey, n)
}

// messageID hands out the next reserved message ID, reserving one for
// each write still to run when none is left.
func (b *rowBatch) messageID() (int64, error) {
	if len(b.ids) == 0 {
		if err := b.reserve(max(1, b.left)); err != nil {
			return 0, err
		}
	}
	id := b.ids[0]
	b.ids = b.ids[1:]
	return id, nil
}

// reserve takes n more message IDs from the sequence, for a write that
// stores more than one message (and the next event sequence, should
// the batch not have it yet).
func (b *rowBatch) reserve(n int) error {
	return b.take("reserve message ids", b.tx.db.hot.reserve, n, n)
}

// take runs st, startSQL or reserveSQL, which returns the highest
// stored sequence and n message IDs, and keeps them.
func (b *rowBatch) take(what string, st *sql.Stmt, n int, args ...any) error {
	t := b.tx.sqlTx()
	if t == nil {
		return fmt.Errorf("store: batch outside a transaction")
	}
	b.tx.db.statements.Add(1)
	ctx := b.tx.g.Statement.Context
	var maxSeq int64
	var ids string
	if err := t.StmtContext(ctx, st).QueryRowContext(ctx, args...).Scan(&maxSeq, &ids); err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	if b.tx.nextSeq == 0 {
		b.tx.nextSeq = maxSeq + 1
	}
	b.ids = append(b.ids, splitIDs(ids)...)
	if len(b.ids) < n {
		return fmt.Errorf("store: reserved %d of %d message ids", len(b.ids), n)
	}
	return nil
}

// flush writes the held rows; last also announces the transaction's
// last event (its notification then need not be sent again).
func (b *rowBatch) flush(last bool) error {
	notify := last && len(b.tx.events) > 0
	if len(b.messages) == 0 && len(b.events) == 0 && !notify {
		return nil
	}
	t := b.tx.sqlTx()
	if t == nil {
		return fmt.Errorf("store: batch outside a transaction")
	}
	var lastSeq string
	if notify {
		lastSeq = fmt.Sprint(b.tx.events[len(b.tx.events)-1].Seq)
	}
	args := append(b.messageArgs(), b.eventArgs()...)
	args = append(args, EventsChannel, notify, lastSeq)
	b.tx.db.statements.Add(1)
	ctx := b.tx.g.Statement.Context
	if _, err := t.StmtContext(ctx, b.tx.db.hot.flush).ExecContext(ctx, args...); err != nil {
		return fmt.Errorf("store: insert batch of %d messages, %d events: %w", len(b.messages), len(b.events), err)
	}
	b.messages, b.events = b.messages[:0], b.events[:0]
	b.tx.notified = notify
	return nil
}

func (b *rowBatch) messageArgs() []any {
	n := len(b.messages)
	ids, chs, aus, ths, tus := make([]int64, n), make([]int64, n), make([]int64, n), make([]*int64, n), make([]*int64, n)
	bodies, mentions, sources, ats := make([]string, n), make([]string, n), make([]string, n), make([]time.Time, n)
	for i, m := range b.messages {
		ids[i], chs[i], aus[i], ths[i], tus[i] = m.ID, m.ChannelID, m.AuthorID, m.ThreadID, m.TurnID
		bodies[i], mentions[i], sources[i], ats[i] = m.Body, m.Mentions, m.Source, m.CreatedAt
	}
	return []any{ids, chs, aus, ths, bodies, mentions, sources, ats, tus}
}

func (b *rowBatch) eventArgs() []any {
	n := len(b.events)
	seqs, chs, actors := make([]int64, n), make([]*int64, n), make([]int64, n)
	types, audiences, payloads, ats := make([]string, n), make([]string, n), make([]string, n), make([]time.Time, n)
	for i, e := range b.events {
		seqs[i], chs[i], actors[i] = e.Seq, e.ChannelID, e.ActorID
		types[i], audiences[i], payloads[i], ats[i] = e.Type, e.Audience, e.Payload, e.CreatedAt
	}
	return []any{seqs, types, chs, actors, audiences, payloads, ats}
}

// flushHook writes a batch's held rows before any other statement of its
// transaction, whichever store method runs it, so that the statement sees
// them (a reply counted on its root, a row referencing a message). A
// failure fails that statement, and with it the write, which sends the
// batch down the savepoint path.
func flushHook(d *gorm.DB) {
	m, ok := d.Statement.Context.Value(marksKey{}).(*txMarks)
	if !ok || m.batch == nil || (len(m.batch.messages) == 0 && len(m.batch.events) == 0) {
		return
	}
	if err := m.batch.flush(false); err != nil {
		d.AddError(err)
	}
}

// hookBatch registers flushHook before every kind of GORM statement.
func (db *DB) hookBatch() error {
	cb := db.gdb.Callback()
	for _, err := range []error{
		cb.Create().Before("gorm:create").Register("bullpen:flush_create", flushHook),
		cb.Update().Before("gorm:update").Register("bullpen:flush_update", flushHook),
		cb.Delete().Before("gorm:delete").Register("bullpen:flush_delete", flushHook),
		cb.Raw().Before("gorm:raw").Register("bullpen:flush_raw", flushHook),
		cb.Query().Before("gorm:query").Register("bullpen:flush_query", flushHook),
		cb.Row().Before("gorm:row").Register("bullpen:flush_row", flushHook),
	} {
		if err != nil {
			return fmt.Errorf("store: register batch hooks: %w", err)
		}
	}
	return nil
}

// preparedBatch prepares startSQL, reserveSQL and flushSQL.
func preparedBatch(prepare func(string) (*sql.Stmt, error), h *hotStmts) error {
	var err error
	if h.start, err = prepare(startSQL); err != nil {
		return fmt.Errorf("store: prepare batch start: %w", err)
	}
	if h.reserve, err = prepare(reserveSQL); err != nil {
		return fmt.Errorf("store: prepare id reservation: %w", err)
	}
	if h.flush, err = prepare(flushSQL); err != nil {
		return fmt.Errorf("store: prepare batch insert: %w", err)
	}
	return nil
}
