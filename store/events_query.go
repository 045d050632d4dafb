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
	var rows []eventRow
	if err := pageQuery(db.read(ctx), v, f).Find(&rows).Error; err != nil {
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

// filterEvents narrows q to the events f selects that v may see. Every
// filter column has an index ending in seq (see migrations 0010 and 0015),
// and the seq bound is always given, so that an unfiltered page too is a
// range of the primary key rather than a scan; TestEventFilterPlans checks
// each shape's plan on both databases.
// pageQuery is the query of EventPage: one row more than the page, which
// says whether an older page exists.
func pageQuery(g *gorm.DB, v EventViewer, f bullpen.EventFilter) *gorm.DB {
	order := "seq"
	if f.Backwards() {
		order = "seq DESC"
	}
	return filterEvents(g.Model(&eventRow{}), v, f).Order(order).Limit(f.Limit + 1)
}

// filterEvents narrows q to the events f selects that v may see. Every
// filter column has an index ending in seq (see migrations 0010 and 0015);
// an unfiltered page always names a seq bound, so that it too reads as a
// range of the primary key. TestEventFilterPlans checks each shape's plan
// on both databases.
func filterEvents(q *gorm.DB, v EventViewer, f bullpen.EventFilter) *gorm.DB {
	if f.After > 0 || f.ActorID == 0 && f.ChannelID == 0 && len(f.Kinds) == 0 {
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
	if len(f.ExcludeKinds) > 0 {
		q = q.Where("type NOT IN ?", f.ExcludeKinds)
	}
	if !v.Admin {
		// audience is "" (everyone) or a comma-separated id list.
		q = q.Where("(audience = '' OR ',' || audience || ',' LIKE ?)", "%,"+strconv.FormatInt(v.ID, 10)+",%")
	}
	return q
}

// kindsClause matches exact types by type, and namespaces ("wiki") by the
// stored category column (the type's part before the dot), each an
// equality its index serves; a prefix match by LIKE would not be.
func kindsClause(kinds []string) (string, []any) {
	var parts []string
	var args []any
	var exact, spaces []string
	for _, k := range kinds {
		if strings.Contains(k, ".") {
			exact = append(exact, k)
		} else {
			spaces = append(spaces, k)
		}
	}
	if len(spaces) > 0 {
		parts = append(parts, "category IN ?")
		args = append(args, spaces)
	}
	if len(exact) > 0 {
		parts = append(parts, "type IN ?")
		args = append(args, exact)
	}
	return "(" + strings.Join(parts, " OR ") + ")", args
}
