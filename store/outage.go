package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
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
	if err == nil || bullpen.ErrorCode(err) != bullpen.EINTERNAL || errors.Is(err, context.Canceled) {
		return false
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		class := pg.Code[:min(2, len(pg.Code))]
		// 08 connection exception, 53 insufficient resources (disk full,
		// too many connections), 57 operator intervention (shutdown,
		// cannot connect now), 58 system error (I/O).
		return class == "08" || class == "53" || class == "57" || class == "58"
	}
	var lite interface{ Code() int }
	if errors.As(err, &lite) {
		switch lite.Code() & 0xff {
		case sqliteBusy, sqliteLocked, sqliteReadonly, sqliteIOErr, sqliteFull, sqliteCantOpen:
			return true
		}
		return false
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne), pgconn.SafeToRetry(err), pgconn.Timeout(err),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, driver.ErrBadConn),
		errors.Is(err, sql.ErrConnDone), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE):
		return true
	}
	// pgx reports a connection it lost mid-query as "conn closed" and one
	// it could not open as "failed to connect", without a typed error.
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "failed to connect") ||
		strings.Contains(msg, "connection refused") || strings.Contains(msg, "broken pipe")
}
