package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
)

// eventLockKey is the PostgreSQL advisory lock that orders event writers
// across replicas, so that sequence numbers become visible in order.
const eventLockKey = 7410

// EventsChannel is the PostgreSQL NOTIFY channel on which every write that
// stored events announces its last sequence, so that other replicas read
// them from the table.
const EventsChannel = "bullpen_events"

// Tx is a write transaction. Changes and the events that describe them
// commit together.
type Tx struct {
	g      *gorm.DB
	db     *DB
	now    time.Time
	events []bullpen.Event
	// nextSeq is the sequence the next event gets on PostgreSQL; 0 until
	// the first Emit reads the highest stored one. Writers hold the
	// advisory lock, so MAX(seq)+1 taken inside the transaction is never
	// shared, and a rollback leaves no gap.
	nextSeq int64
	marks   *txMarks
	// batch, on PostgreSQL in a grouped batch's first run, holds the
	// messages and events until one statement writes them
	// (events_batch.go).
	batch *rowBatch
	// notified: the batch's last write announced its events already.
	notified bool
	// chanAud holds the channel audiences this transaction read, kept by
	// the database once it commits (visibility.go).
	chanAud map[int64][]int64
}

// Transact runs fn in a transaction. When fn returns nil the transaction
// commits and its events are published, in order; otherwise nothing is
// stored and fn's error is returned.
func (db *DB) Transact(ctx context.Context, fn func(*Tx) error) ([]bullpen.Event, error) {
	started := time.Now()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	tx, err := db.begin(ctx)
	if err != nil {
		return nil, db.wrote(started, err)
	}
	defer tx.g.Rollback() // no-op after a commit
	if err := fn(tx); err != nil {
		return nil, db.wrote(started, err)
	}
	if err := tx.commit(); err != nil {
		return nil, db.wrote(started, err)
	}
	return tx.events, db.wrote(started, nil)
}

// begin opens a write transaction; the caller holds writeMu. On
// PostgreSQL it takes the advisory lock that orders writers across
// replicas.
func (db *DB) begin(ctx context.Context) (*Tx, error) {
	tx, err := db.open(ctx)
	if err != nil || db.dialect != Postgres {
		return tx, err
	}
	if err := tx.g.Exec("SELECT pg_advisory_xact_lock(?)", eventLockKey).Error; err != nil {
		tx.g.Rollback()
		return nil, fmt.Errorf("store: lock events: %w", err)
	}
	return tx, nil
}

// open opens a transaction that holds no lock yet.
func (db *DB) open(ctx context.Context) (*Tx, error) {
	marks := &txMarks{}
	g := db.gdb.WithContext(context.WithValue(ctx, marksKey{}, marks)).Begin()
	if g.Error != nil {
		return nil, fmt.Errorf("store: begin: %w", g.Error)
	}
	return &Tx{g: g, db: db, now: db.now().UTC(), marks: marks}, nil
}

// commit announces, commits and publishes the transaction's events; the
// caller holds writeMu, so publishing keeps sequence order.
func (tx *Tx) commit() error {
	if err := tx.notify(); err != nil {
		return err
	}
	if err := tx.g.Commit().Error; err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	tx.db.commits.Add(1)
	tx.db.channelAud.keep(tx.chanAud)
	if tx.marks.auth {
		for _, fn := range tx.db.onAuth {
			fn()
		}
	}
	if tx.db.publish != nil && len(tx.events) > 0 {
		tx.db.publish(tx.events)
	}
	return nil
}

// notify tells the other replicas, on PostgreSQL, that this transaction
// stored events; NOTIFY is delivered only if the transaction commits.
func (tx *Tx) notify() error {
	if tx.db.dialect != Postgres {
		return nil
	}
	if tx.marks.auth {
		if err := tx.g.Exec("SELECT pg_notify(?, '')", AuthChannel).Error; err != nil {
			return fmt.Errorf("store: notify auth change: %w", err)
		}
	}
	if len(tx.events) == 0 || tx.notified {
		return nil
	}
	last := strconv.FormatInt(tx.events[len(tx.events)-1].Seq, 10)
	if err := tx.g.Exec("SELECT pg_notify(?, ?)", EventsChannel, last).Error; err != nil {
		return fmt.Errorf("store: notify events: %w", err)
	}
	return nil
}

// seq returns the next event sequence number of the transaction; 0 on
// SQLite, whose AUTOINCREMENT is already gap-free: its counter
// (sqlite_sequence) is written in the same transaction and rolls back
// with it, and there is one writer at a time. Leaving it to SQLite saves
// a query per write (TestWriteRollbackLeavesNoGap checks both).
func (tx *Tx) seq() (int64, error) {
	if tx.db.dialect != Postgres {
		return 0, nil
	}
	if tx.nextSeq == 0 && tx.batch != nil {
		if err := tx.batch.reserve(0); err != nil {
			return 0, err
		}
	}
	if tx.nextSeq == 0 {
		var max int64
		if err := tx.g.Raw("SELECT COALESCE(MAX(seq), 0) FROM events").Scan(&max).Error; err != nil {
			return 0, fmt.Errorf("store: next event seq: %w", err)
		}
		tx.nextSeq = max + 1
	}
	tx.nextSeq++
	return tx.nextSeq - 1, nil
}

// Now is the transaction's timestamp, shared by all rows it writes.
func (tx *Tx) Now() time.Time { return tx.now }

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}

func splitIDs(s string) []int64 {
	if s == "" {
		return nil
	}
	var out []int64
	for _, p := range strings.Split(s, ",") {
		if id, err := strconv.ParseInt(p, 10, 64); err == nil {
			out = append(out, id)
		}
	}
	return out
}

// notFound turns gorm's record-not-found into an ENOTFOUND error.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return bullpen.Errorf(bullpen.ENOTFOUND, format, args...)
	}
	return err
}

// isUniqueViolation reports whether err is a unique-constraint failure.
func isUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "UNIQUE constraint failed") || strings.Contains(s, "SQLSTATE 23505") ||
		strings.Contains(s, "duplicate key value")
}
