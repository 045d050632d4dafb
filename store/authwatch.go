package store

import (
	"strings"

	"gorm.io/gorm"
)

// AuthChannel is the PostgreSQL NOTIFY channel on which a write that
// changed credentials, members or channel membership announces itself, so
// that other replicas drop what they cached of them.
const AuthChannel = "bullpen_auth"

// marksKey carries a transaction's txMarks in the context of its
// statements, where the watch callbacks find them.
type marksKey struct{}

// txMarks records what a transaction's statements touched.
type txMarks struct {
	// auth: a row of a table that decides who a credential is or what
	// its member may see was inserted, changed or deleted.
	auth bool
	// batch holds the rows its grouped batch has not written yet
	// (events_batch.go).
	batch *rowBatch
}

// WatchAuth adds a function called after each commit that wrote
// to tokens, sessions, members, channels or channel_members,
// before the writer returns: a cache of who a credential is (and what it
// may see) drops its entries there, so that a revoked token is refused
// by the very next request. Other replicas learn it by a NOTIFY on
// AuthChannel. It runs under the write lock: it must not block, and must
// be added before the first write.
func (db *DB) WatchAuth(fn func()) { db.onAuth = append(db.onAuth, fn) }

// Counts returns how many SQL statements the store has run since it
// opened (BEGIN and COMMIT not counted) and how many write transactions
// committed: a benchmark divides them by the work done.
func (db *DB) Counts() (statements, commits int64) {
	return db.statements.Load(), db.commits.Load()
}

// watch registers the callbacks that count statements and mark a
// transaction whose statements write to the auth tables, whichever store
// method wrote them (now or later), so that no cache can miss a change.
func (db *DB) watch() error {
	count := func(*gorm.DB) { db.statements.Add(1) }
	write := func(d *gorm.DB) { count(d); markAuth(d) }
	cb := db.gdb.Callback()
	for _, err := range []error{
		cb.Create().After("gorm:create").Register("bullpen:watch_create", write),
		cb.Update().After("gorm:update").Register("bullpen:watch_update", write),
		cb.Delete().After("gorm:delete").Register("bullpen:watch_delete", write),
		cb.Raw().After("gorm:raw").Register("bullpen:watch_raw", write),
		cb.Query().After("gorm:query").Register("bullpen:count_query", count),
		cb.Row().After("gorm:row").Register("bullpen:count_row", count),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

func markAuth(d *gorm.DB) {
	m, ok := d.Statement.Context.Value(marksKey{}).(*txMarks)
	if !ok || m.auth {
		return
	}
	if d.Statement.Table != "" {
		m.auth = isAuthTable(d.Statement.Table)
		return
	}
	// Raw SQL: look for the tables' names in it. Reads are not raw
	// statements; an extra match only empties a cache once more.
	sql := strings.ToLower(d.Statement.SQL.String())
	for _, t := range []string{"tokens", "sessions", "members", "channels"} {
		if strings.Contains(sql, t) {
			m.auth = true
			return
		}
	}
}

func isAuthTable(t string) bool {
	switch t {
	case "tokens", "sessions", "members", "channels", "channel_members":
		return true
	}
	return false
}
