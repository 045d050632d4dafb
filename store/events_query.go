package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
)

// EventViewer is who reads the log: a non-admin sees only events whose
// audience is everyone or includes them.
type EventViewer struct {
	ID    int64
	Admin bool
}

// EventPage returns one page of the events f selects that v may see:
// newest first when f runs backwards, else oldest first. Visibility is
// part of the query, so NextBefore is set only when an older event the
// viewer may see matches.
func (db *DB) EventPage(ctx context.Context, v EventViewer, f bullpen.EventFilter) (bullpen.EventPage, error) {
	page := bullpen.EventPage{Items: []bullpen.Event{}}
	q := filterEvents(db.read(ctx).Model(&eventRow{}), v, f)
	order := "seq"
	if f.Backwards() {
		order = "seq DESC"
	}
	var rows []eventRow
	// One row more than the page says whether an older page exists.
	if err := q.Order(order).Limit(f.Limit + 1).Find(&rows).Error; err != nil {
		return page, fmt.Errorf("store: event page: %w", err)
	}
	more := len(rows) > f.Limit
	if more {
		rows = rows[:f.Limit]
	}
	for i := range rows {
		page.Items = append(page.Items, rows[i].toEvent())
	}
	if f.Backwards() && more {
		page.NextBefore = rows[len(rows)-1].Seq
	}
	return page, nil
}

func filterEvents(q *gorm.DB, v EventViewer, f bullpen.EventFilter) *gorm.DB {
	if f.After > 0 {
		q = q.Where("seq > ?", f.After)
	}
	if f.Before > 0 {
		q = q.Where("seq < ?", f.Before)
	}
	if f.ActorID != 0 {
		q = q.Where("actor_id = ?", f.ActorID)
	}
	if f.ChannelID != 0 {
		q = q.Where("channel_id = ?", f.ChannelID)
	}
	if len(f.Kinds) > 0 {
		clause, args := kindsClause(f.Kinds)
		q = q.Where(clause, args...)
	}
	if !v.Admin {
		// audience is "" (everyone) or a comma-separated id list.
		q = q.Where("(audience = '' OR ',' || audience || ',' LIKE ?)", "%,"+strconv.FormatInt(v.ID, 10)+",%")
	}
	return q
}

// kindsClause matches exact types, and namespaces ("wiki") by prefix.
func kindsClause(kinds []string) (string, []any) {
	var parts []string
	var args []any
	var exact []string
	for _, k := range kinds {
		if strings.Contains(k, ".") {
			exact = append(exact, k)
			continue
		}
		parts = append(parts, "type LIKE ?")
		args = append(args, k+".%")
	}
	if len(exact) > 0 {
		parts = append(parts, "type IN ?")
		args = append(args, exact)
	}
	return "(" + strings.Join(parts, " OR ") + ")", args
}
