package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/jackc/pgx/v5/pgconn"
)

// writeTroubleFor is how long a failed write keeps the store "in
// trouble" when no write has succeeded since.
const writeTroubleFor = 2 * time.Minute

// writeHealth remembers the last write that failed because the database
// could not take it (down, disk full, locked too long), until a write
// succeeds.
type writeHealth struct {
	mu       sync.Mutex
	failed   time.Time // when the failed write began
	why      string
	lastGood time.Time // when the latest successful write began
}

// wrote classifies the outcome of a write that began at started: a
// failure of the database itself becomes EUNAVAILABLE (the client may
// retry), and is remembered for WriteTrouble; a success clears it. Writes
// are ordered by when they began, so a slow write that began before a
// success and failed after it does not bring the trouble back.
func (db *DB) wrote(started time.Time, err error) error {
	h := &db.writes
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		if started.After(h.lastGood) {
			h.lastGood = started
		}
		if !h.failed.After(started) {
			h.failed, h.why = time.Time{}, ""
		}
		return nil
	}
	if !dbFailure(err) {
		return err
	}
	if started.After(h.lastGood) && started.After(h.failed) {
		h.failed, h.why = started, err.Error()
	}
	cause := err
	if !errors.Is(err, context.DeadlineExceeded) {
		cause = outage{err} // IsOutage still knows it as the database's failure
	}
	return &bullpen.Error{Code: bullpen.EUNAVAILABLE, Err: cause,
		Message: "the database cannot take writes right now (" + unavailableWhy(err) + "); try again shortly"}
}

// outage marks a write that failed because of the database itself, once
// wrote made it EUNAVAILABLE, so IsOutage answers for it as for the raw
// driver error.
type outage struct{ error }

func (o outage) Unwrap() error { return o.error }

// WriteTrouble is why the last write failed, when it failed because of
// the database (not of its input) less than two minutes ago and no write
// has succeeded since; nil otherwise.
func (db *DB) WriteTrouble() error {
	h := &db.writes
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed.IsZero() || time.Since(h.failed) > writeTroubleFor {
		return nil
	}
	return errors.New(h.why)
}

// sqliteTrouble are SQLite's and the drivers' texts for a database that
// cannot take a write, and what to call them.
var sqliteTrouble = [][2]string{
	{"database or disk is full", "the disk is full"},
	{"sqlite_full", "the disk is full"},
	{"no space left on device", "the disk is full"},
	{"disk i/o error", "a disk I/O error"},
	{"sqlite_ioerr", "a disk I/O error"},
	{"database is locked", "the database is locked"},
	{"sqlite_busy", "the database is locked"},
	{"database table is locked", "the database is locked"},
	{"readonly database", "the database is read-only"},
	{"unable to open database", "the database cannot be opened"},
	{"conn closed", "the connection was lost"},
	{"connection refused", "the database does not answer"},
	{"failed to connect", "the database does not answer"},
	{"server closed the connection", "the connection was lost"},
	{"broken pipe", "the connection was lost"},
	{"connection reset", "the connection was lost"},
	{"shutting down", "the database is shutting down"},
}

// unavailableWhy names the kind of failure in a few words.
func unavailableWhy(err error) string {
	msg := strings.ToLower(err.Error())
	for _, t := range sqliteTrouble {
		if strings.Contains(msg, t[0]) {
			return t[1]
		}
	}
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "53100":
		return "the disk is full"
	case errors.As(err, &pe) && strings.HasPrefix(pe.Code, "08"), errors.Is(err, driver.ErrBadConn), errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was lost"
	case errors.Is(err, context.DeadlineExceeded):
		return "the database took too long"
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "the disk is full"
	}
	return "a database error"
}
