// Package store persists Bullpen's state with GORM on SQLite (embedded, the
// default) or PostgreSQL. Schema changes come only from the versioned SQL
// files in package migrations, applied by Open. GORM types never leave this
// package: callers see plain structs (the domain types of package bullpen
// and the store's own records), and write only through DB.Transact and its Tx,
// which commits each change with its events.
package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/redact"
	"github.com/libtnb/sqlite"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Dialects.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Config says where the database is.
type Config struct {
	// URL is a postgres:// or postgresql:// URL; empty means SQLite at
	// DataDir/bullpen.db.
	URL     string
	DataDir string
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
	// Record caps what is kept of each model call (RecordModelCall).
	Record RecordCaps
	// Secrets are blanked in every event, message, turn error and model
	// call written (nil: only URLs' user information is).
	Secrets *redact.Secrets
}

// DB is an open database.
type DB struct {
	gdb     *gorm.DB
	dialect string
	publish func([]bullpen.Event)
	now     func() time.Time
	url     string // PostgreSQL: for the listener's and locks' own connections
	caps    RecordCaps
	secrets *redact.Secrets
	// writes remembers a failed write until one succeeds (WriteTrouble).
	writes  writeHealth
	dataDir string // SQLite: where the file is
	// life ends when the store closes, stopping listeners.
	life context.Context
	stop context.CancelFunc

	// writeMu serializes writers in this process so that event sequence
	// numbers commit, and are published, in order. Across processes on
	// PostgreSQL the transaction's advisory lock does the same (tx.go).
	writeMu sync.Mutex
	// group batches TransactGrouped's writes for one committer (group.go).
	group *grouper
	// onAuth is told of commits that changed credentials or membership
	// (authwatch.go).
	onAuth []func()
	// statements and commits count what ran (Counts).
	statements, commits atomic.Int64
	// hot holds the prepared inserts of the post path (hot.go).
	hot *hotStmts
	// channelAud keeps each channel's event audience (visibility.go).
	channelAud channelAudiences
}

// Open connects, applies pending migrations and returns the database.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	db := &DB{now: cfg.Now, url: cfg.URL, caps: cfg.Record, secrets: cfg.Secrets, dataDir: cfg.DataDir, group: newGrouper()}
	db.life, db.stop = context.WithCancel(context.Background())
	if db.now == nil {
		db.now = time.Now
	}
	gcfg := &gorm.Config{Logger: logger.Discard, SkipDefaultTransaction: true, NowFunc: func() time.Time { return db.now().UTC() }}
	var err error
	switch {
	case cfg.URL == "":
		if cfg.DataDir == "" {
			return nil, fmt.Errorf("store: no data directory")
		}
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("store: create data directory: %w", err)
		}
		dsn := filepath.Join(cfg.DataDir, "bullpen.db") +
			"?_txlock=immediate&_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)" +
			"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
		db.dialect = SQLite
		db.gdb, err = gorm.Open(sqlite.Open(dsn), gcfg)
	case strings.HasPrefix(cfg.URL, "postgres://") || strings.HasPrefix(cfg.URL, "postgresql://"):
		db.dialect = Postgres
		db.gdb, err = gorm.Open(postgres.Open(cfg.URL), gcfg)
	default:
		return nil, bullpen.Errorf(bullpen.EINVALID, "database URL must start with postgres:// (or be empty for SQLite)")
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", db.dialect, err)
	}
	if err := db.watch(); err != nil {
		return nil, fmt.Errorf("store: register callbacks: %w", err)
	}
	sqlDB, err := db.gdb.DB()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if db.dialect == SQLite {
		sqlDB.SetMaxOpenConns(8)
	} else {
		sqlDB.SetMaxOpenConns(16)
	}
	sqlDB.SetMaxIdleConns(8)
	if err := db.migrate(ctx); err != nil {
		db.stop()
		sqlDB.Close()
		return nil, err
	}
	if err := db.prepareHot(ctx); err != nil {
		db.stop()
		sqlDB.Close()
		return nil, err
	}
	go db.runGroups()
	return db, nil
}

// Dialect returns SQLite or Postgres.
func (db *DB) Dialect() string { return db.dialect }

// SetPublisher sets the function that receives each committed
// transaction's events, in sequence order, before the next write in this
// process starts (it runs under the write lock).
// It must not block, and must be set before the first write.
func (db *DB) SetPublisher(p func([]bullpen.Event)) { db.publish = p }

// Close stops the store's listeners, waits for a running write to finish
// and closes the connection pool.
func (db *DB) Close() error {
	db.stop()
	<-db.group.stopped // the writes queued by now are committed
	db.writeMu.Lock()  // let a running write finish
	defer db.writeMu.Unlock()
	sqlDB, err := db.gdb.DB()
	if err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	db.closeHot()
	return sqlDB.Close()
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	sqlDB, err := db.gdb.DB()
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return sqlDB.PingContext(ctx)
}

// read returns a session for reads bound to ctx.
func (db *DB) read(ctx context.Context) *gorm.DB { return db.gdb.WithContext(ctx) }
