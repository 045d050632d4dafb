package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
)

// likeEscaper escapes LIKE's wildcards so an id matches only itself.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// SandboxEventQuery selects stored events about one sandbox.
type SandboxEventQuery struct {
	SandboxID string   // the payload's "id"
	Types     []string // event types
	Before    int64    // seq < Before (0: no bound); newest first
	After     int64    // seq > After (0: no bound); with After, oldest first
	Limit     int
}

// SandboxEvents returns the events q selects. The sandbox id is matched in
// the payload text, so it works alike on SQLite and PostgreSQL without a
// migration; the type filter keeps the scan to sandbox events.
func (db *DB) SandboxEvents(ctx context.Context, q SandboxEventQuery) ([]bullpen.Event, error) {
	var rows []eventRow
	if err := sandboxEventsQuery(db.read(ctx), q).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: events of sandbox %s: %w", q.SandboxID, err)
	}
	out := make([]bullpen.Event, len(rows))
	for i := range rows {
		out[i] = rows[i].toEvent()
	}
	return out, nil
}

// sandboxEventsQuery is SandboxEvents' query: the (type, seq) index
// narrows it to the sandbox event types, the payload match does the rest.
func sandboxEventsQuery(g *gorm.DB, q SandboxEventQuery) *gorm.DB {
	pattern := "%" + likeEscaper.Replace(fmt.Sprintf(`"id":%q`, q.SandboxID)) + "%"
	g = g.Model(&eventRow{}).Where("type IN ? AND payload LIKE ? ESCAPE '\\'", q.Types, pattern)
	order := "seq DESC"
	if q.Before > 0 {
		g = g.Where("seq < ?", q.Before)
	}
	if q.After > 0 {
		g, order = g.Where("seq > ?", q.After), "seq"
	}
	return g.Order(order).Limit(q.Limit)
}
