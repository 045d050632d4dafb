package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/bullpen-hq/bullpen"
	"github.com/jackc/pgx/v5/pgconn"
)

// SQLite result codes (the primary code, the low byte) that say the
// database could not be written just now, not that the request was wrong.
const (
	sqliteBusy     = 5
	sqliteLocked   = 6
	sqliteReadonly = 8
	sqliteIOErr    = 10
	sqliteFull     = 13
	sqliteCantOpen = 14
)

// IsOutage reports whether err says the database could not be reached or
// written at the moment (connection refused or cut, the server shutting
// down or starting, a lock held too long, a full or read-only disk),
// rather than that the request itself was wrong. A caller that gets one
// may try the same write again later: it was not applied, or it was
// applied whole (a transaction commits or not).
func IsOutage(err error) bool {
	if o := (outage{}); errors.As(err, &o) {
		return true // a write's failure, already answered as unavailable
	}
	return dbFailure(err)
}

// dbFailure is the one classifier of the database's own failures: the
// connection lost or refused, the server shutting down or starting, a
// lock held too long, an I/O error, a full or read-only disk. Errors that
// already carry a code (bad input, conflicts), and a caller that went
// away, are not.
func dbFailure(err error) bool {
	if err == nil || bullpen.ErrorCode(err) != bullpen.EINTERNAL || errors.Is(err, context.Canceled) {
		return false
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		class := pg.Code[:min(2, len(pg.Code))]
		// 08 connection exception, 53 insufficient resources (disk full,
		// too many connections), 57 operator intervention (shutdown,
		// cannot connect now), 58 system error (I/O); 55P03 lock timeout.
		return class == "08" || class == "53" || class == "57" || class == "58" || pg.Code == "55P03"
	}
	var lite interface{ Code() int }
	if errors.As(err, &lite) {
		switch lite.Code() & 0xff {
		case sqliteBusy, sqliteLocked, sqliteReadonly, sqliteIOErr, sqliteFull, sqliteCantOpen:
			return true
		}
	}
	for _, e := range []error{driver.ErrBadConn, sql.ErrConnDone, io.EOF, io.ErrUnexpectedEOF, context.DeadlineExceeded,
		syscall.ENOSPC, syscall.EIO, syscall.EROFS, syscall.EDQUOT, syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	if errors.As(err, &ne) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	// The drivers report some failures only in words (pgx: "conn closed",
	// "failed to connect"; SQLite drivers: "database is locked", …).
	return unavailableWhy(err) != "a database error"
}
