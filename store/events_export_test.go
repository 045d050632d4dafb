package store

import (
	"fmt"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
)

// ExecSQL runs a statement, for tests that check migrations' SQL.
func (db *DB) ExecSQL(sql string) error { return db.gdb.Exec(sql).Error }

// EventActors returns each stored event's type, payload and actor_id.
func (db *DB) EventActors() ([][3]any, error) {
	var rows []eventRow
	if err := db.gdb.Order("seq").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([][3]any, len(rows))
	for i, r := range rows {
		out[i] = [3]any{r.Type, r.Payload, r.ActorID}
	}
	return out, nil
}

// EventPagePlan returns the database's plan for EventPage's query: EXPLAIN
// QUERY PLAN on SQLite, EXPLAIN on PostgreSQL, one line per step.
func (db *DB) EventPagePlan(v EventViewer, f bullpen.EventFilter) (string, error) {
	sql := db.gdb.ToSQL(func(g *gorm.DB) *gorm.DB {
		var rows []eventRow
		return pageQuery(g, v, f).Find(&rows)
	})
	return db.explain(sql)
}

// SandboxEventsPlan is EventPagePlan for SandboxEvents' query.
func (db *DB) SandboxEventsPlan(q SandboxEventQuery) (string, error) {
	sql := db.gdb.ToSQL(func(g *gorm.DB) *gorm.DB {
		var rows []eventRow
		return sandboxEventsQuery(g, q).Find(&rows)
	})
	return db.explain(sql)
}

func (db *DB) explain(sql string) (string, error) {
	prefix, col := "EXPLAIN ", "QUERY PLAN"
	if db.dialect == SQLite {
		prefix, col = "EXPLAIN QUERY PLAN ", "detail"
	}
	rows, err := db.gdb.Raw(prefix + sql).Rows()
	if err != nil {
		return "", fmt.Errorf("explain %s: %w", sql, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		for i, c := range cols {
			if c == col {
				lines = append(lines, fmt.Sprint(vals[i]))
			}
		}
	}
	return strings.Join(lines, "\n"), rows.Err()
}

// SeedEvents appends n events to the log in one statement, for tests and
// benchmarks of the log's queries at size: types cycle through messages,
// agents' tool calls and turns and wiki saves, one in 200 is a sandbox
// event; 20 actors in 10 channels, but one event in 1,000 is by actor 99
// in channel 99; one in ten is to a DM audience (2, 9). The
// statistics are refreshed after, as autovacuum would have.
func (db *DB) SeedEvents(n int) error {
	var base int64
	if err := db.gdb.Raw("SELECT COALESCE(MAX(seq), 0) FROM events").Scan(&base).Error; err != nil {
		return err
	}
	cols := `SELECT ? + i, CASE WHEN i % 200 = 0 THEN 'sandbox.exec_finished' WHEN i % 4 = 0 THEN 'message.posted'
		WHEN i % 4 = 1 THEN 'agent.tool_finished' WHEN i % 4 = 2 THEN 'agent.turn_started' ELSE 'wiki.page_saved' END,
		CASE WHEN i % 1000 = 0 THEN 99 ELSE i % 10 + 1 END, CASE WHEN i % 1000 = 0 THEN 99 ELSE i % 20 + 1 END, CASE WHEN i % 10 = 0 THEN '2,9' ELSE '' END,
		'{"agent_id":' || (i % 20 + 1) || ',"n":' || i || '}', ?`
	ins := `INSERT INTO events (seq, type, channel_id, actor_id, audience, payload, created_at) `
	sql := ins + `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?) ` + cols + ` FROM c`
	args := []any{n, base, time.Now().UTC()}
	if db.dialect == Postgres {
		sql = ins + cols + ` FROM generate_series(1, ?) AS c(i)`
		args = []any{base, time.Now().UTC(), n}
	}
	if err := db.gdb.Exec(sql, args...).Error; err != nil {
		return fmt.Errorf("seed events: %w", err)
	}
	return db.gdb.Exec("ANALYZE").Error
}
