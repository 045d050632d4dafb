package store

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// maxGroup bounds the writes one group commit holds. PostgreSQL keeps a
// few dozen subtransactions (one per savepoint) in shared memory before
// it spills them; staying below that keeps a batch cheap.
const maxGroup = 48

// groupWrite is one caller's write waiting for the committer.
type groupWrite struct {
	ctx  context.Context
	fn   func(*Tx) error
	done chan groupResult // buffered: the committer never waits for the caller
}

type groupResult struct {
	events []bullpen.Event
	err    error
}

// grouper queues concurrent writes for one committer goroutine, which
// commits whatever has queued up in one transaction. Under load many
// writes share one BEGIN, one advisory lock and one COMMIT; alone, a write
// waits for nobody.
type grouper struct {
	mu      sync.Mutex
	queue   []*groupWrite
	closed  bool
	kick    chan struct{}
	stopped chan struct{}
}

// TransactGrouped is Transact for small, frequent writes (posting a
// message): fn may share its transaction with other callers' writes.
// When fn fails, only its own changes and events are rolled back and its
// error is returned; the others commit. fn runs on the committer's
// goroutine and must touch nothing but tx (and reads): when another
// write of its batch fails, the batch is rolled back and run again, each
// write in a savepoint, so fn may run twice, and only one run commits.
// A write that returns nil is committed and its events are published in
// sequence order, as with Transact.
func (db *DB) TransactGrouped(ctx context.Context, fn func(*Tx) error) ([]bullpen.Event, error) {
	started := time.Now()
	w := &groupWrite{ctx: ctx, fn: fn, done: make(chan groupResult, 1)}
	g := db.group
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil, fmt.Errorf("store: write after close")
	}
	g.queue = append(g.queue, w)
	g.mu.Unlock()
	select {
	case g.kick <- struct{}{}:
	default:
	}
	// Once queued the write is answered, whatever ctx does: returning
	// early could report a failure for a write that then commits.
	r := <-w.done
	return r.events, db.wrote(started, r.err)
}

func newGrouper() *grouper {
	return &grouper{kick: make(chan struct{}, 1), stopped: make(chan struct{})}
}

// take removes up to maxGroup queued writes.
func (g *grouper) take() []*groupWrite {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := min(len(g.queue), maxGroup)
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	if len(g.queue) == 0 {
		g.queue = nil
	}
	return batch
}

// run commits queued writes until the store closes; the writes queued by
// then are still committed.
func (db *DB) runGroups() {
	g := db.group
	defer close(g.stopped)
	for {
		select {
		case <-g.kick:
		case <-db.life.Done():
			g.mu.Lock()
			g.closed = true
			g.mu.Unlock()
			for batch := g.take(); len(batch) > 0; batch = g.take() {
				db.commitGroup(batch)
			}
			return
		}
		for batch := g.take(); len(batch) > 0; batch = g.take() {
			db.commitGroup(batch)
		}
	}
}

// commitGroup runs a batch of writes in one transaction and answers each
// caller: its own error, or its events once the whole batch committed.
// It first runs the writes one after the other, no savepoints (each
// costs a statement, on PostgreSQL a round trip), and on PostgreSQL
// holds their messages and events for one multi-row write
// (events_batch.go). Only when one of them fails, or that write does,
// does it roll back and run the batch again with a savepoint and single
// inserts each, so that the failing write is found and fails alone.
func (db *DB) commitGroup(batch []*groupWrite) {
	batch = dropEnded(batch)
	if len(batch) == 0 {
		return
	}
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	if !db.tryGroup(batch, false) {
		db.tryGroup(batch, true)
	}
}

// tryGroup runs the batch in one transaction and answers every write;
// unless careful is false and a write of several failed: then nothing is
// committed or answered, and it reports false.
func (db *DB) tryGroup(batch []*groupWrite, careful bool) bool {
	// No caller's context governs the shared transaction: one caller
	// going away must not fail the others.
	var tx *Tx
	var err error
	if !careful && db.dialect == Postgres {
		tx, err = db.beginBatch(len(batch))
	} else {
		tx, err = db.begin(context.Background())
	}
	if err != nil {
		answerAll(batch, err)
		return true
	}
	defer tx.g.Rollback() // no-op after a commit
	shared := len(batch) > 1
	spans, errs, err := tx.runGroup(batch, careful && shared)
	if err == nil && tx.batch != nil && allSucceeded(errs) {
		if ferr := tx.batch.flush(true); ferr != nil && shared {
			return false // which write's rows failed is for the careful run to find
		} else if ferr != nil {
			errs[0] = ferr
		}
	}
	switch {
	case err == nil && !careful && shared && !allSucceeded(errs):
		return false
	case err == nil && allFailed(errs):
		answer(batch, spans, errs, nil) // nothing to commit
		return true
	case err == nil:
		err = tx.commit()
	}
	if err != nil {
		answerAll(batch, err)
		return true
	}
	answer(batch, spans, errs, tx.events)
	return true
}

// runGroup runs the writes, each in its own savepoint when savepoints is
// set, and otherwise stops at the first that fails. A write that fails
// in its savepoint is rolled back to it, its events and sequence numbers
// given back, so the next write's events continue the sequence without
// a gap. err is set when the transaction itself broke; then nothing may
// commit.
func (tx *Tx) runGroup(batch []*groupWrite, savepoints bool) (spans [][2]int, errs []error, err error) {
	spans, errs = make([][2]int, len(batch)), make([]error, len(batch))
	for i, w := range batch {
		if tx.batch != nil {
			tx.batch.left = len(batch) - i
		}
		from, seq := len(tx.events), tx.nextSeq
		name := "w" + strconv.Itoa(i)
		if savepoints {
			if err := tx.g.Exec("SAVEPOINT " + name).Error; err != nil {
				return nil, nil, fmt.Errorf("store: savepoint: %w", err)
			}
		}
		if errs[i] = runOne(w.fn, tx); errs[i] != nil {
			if !savepoints {
				return spans, errs, nil
			}
			if err := tx.g.Exec("ROLLBACK TO SAVEPOINT " + name).Error; err != nil {
				return nil, nil, fmt.Errorf("store: roll back to savepoint: %w", err)
			}
			tx.events, tx.nextSeq = tx.events[:from], seq
			continue
		}
		spans[i] = [2]int{from, len(tx.events)}
	}
	return spans, errs, nil
}

// runOne runs fn, turning a panic into its caller's error so that it
// cannot take the committer, and everyone's writes, down with it.
func runOne(fn func(*Tx) error, tx *Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = bullpen.Errorf(bullpen.EINTERNAL, "store: write panicked: %v", p)
		}
	}()
	return fn(tx)
}

// dropEnded answers the writes whose caller has gone away before they
// started (nothing of them was written) and returns the rest.
func dropEnded(batch []*groupWrite) []*groupWrite {
	out := batch[:0]
	for _, w := range batch {
		if err := w.ctx.Err(); err != nil {
			w.done <- groupResult{err: err}
			continue
		}
		out = append(out, w)
	}
	return out
}

func allSucceeded(errs []error) bool {
	for _, err := range errs {
		if err != nil {
			return false
		}
	}
	return true
}

func allFailed(errs []error) bool {
	for _, err := range errs {
		if err == nil {
			return false
		}
	}
	return true
}

// answer gives each write its own error or its slice of the committed
// events.
func answer(batch []*groupWrite, spans [][2]int, errs []error, events []bullpen.Event) {
	for i, w := range batch {
		if errs[i] != nil {
			w.done <- groupResult{err: errs[i]}
			continue
		}
		s := spans[i]
		w.done <- groupResult{events: events[s[0]:s[1]:s[1]]}
	}
}

func answerAll(batch []*groupWrite, err error) {
	for _, w := range batch {
		w.done <- groupResult{err: err}
	}
}
