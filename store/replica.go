package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Several processes (replicas) may share one PostgreSQL database. They
// learn of each other's writes through LISTEN/NOTIFY and elect one wake
// router with a session advisory lock. Both use a connection of their
// own, outside the pool: a LISTEN or a session lock must not be handed to
// another caller. On SQLite, where one process is the norm, both are
// trivial.

// Shared reports whether other processes may write to this database.
func (db *DB) Shared() bool { return db.dialect == Postgres }

// Done is closed when the store closes.
func (db *DB) Done() <-chan struct{} { return db.life.Done() }

// Listen calls fn with each notification on channel until ctx ends or
// the store closes. It reconnects after an error, and calls fn("") after
// each (re)connect because notifications sent while it was not listening
// are lost: fn must re-read what it cares about. On SQLite it only waits.
func (db *DB) Listen(ctx context.Context, channel string, fn func(payload string)) {
	ctx, cancel := mergeDone(ctx, db.life)
	defer cancel()
	for ctx.Err() == nil {
		if db.dialect != Postgres {
			<-ctx.Done()
			return
		}
		err := db.listenOnce(ctx, channel, fn)
		if ctx.Err() != nil {
			return
		}
		_ = err // the caller polls too; retry after a pause
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (db *DB) listenOnce(ctx context.Context, channel string, fn func(string)) error {
	conn, err := pgx.Connect(ctx, db.url)
	if err != nil {
		return fmt.Errorf("store: listen: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return fmt.Errorf("store: listen %s: %w", channel, err)
	}
	fn("")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("store: wait for notification: %w", err)
		}
		fn(n.Payload)
	}
}

// SessionLock is a PostgreSQL advisory lock held by a connection of its
// own: it lasts as long as that session, so a process that dies, however
// it dies, releases it at once. On SQLite it is always held.
type SessionLock struct {
	conn *pgx.Conn
}

// TryLock takes the session lock key without waiting; it returns nil
// (and no error) when another session holds it.
func (db *DB) TryLock(ctx context.Context, key int64) (*SessionLock, error) {
	if db.dialect != Postgres {
		return &SessionLock{}, nil
	}
	conn, err := pgx.Connect(ctx, db.url)
	if err != nil {
		return nil, fmt.Errorf("store: lock %d: %w", key, err)
	}
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&got); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("store: lock %d: %w", key, err)
	}
	if !got {
		conn.Close(context.Background())
		return nil, nil
	}
	return &SessionLock{conn: conn}, nil
}

// Held checks that the lock's session is still alive, and so the lock
// still held.
func (l *SessionLock) Held(ctx context.Context) bool {
	if l == nil {
		return false
	}
	if l.conn == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return l.conn.Ping(ctx) == nil
}

// Release gives the lock up by closing its session; a nil lock is none.
func (l *SessionLock) Release() {
	if l != nil && l.conn != nil {
		l.conn.Close(context.Background())
	}
}

// mergeDone returns a context that ends when either a or b does.
func mergeDone(a, b context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(a)
	stop := context.AfterFunc(b, cancel)
	return ctx, func() { stop(); cancel() }
}
