package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
)

// MemoryQuery is a full-text search of one agent's entries.
type MemoryQuery struct {
	AgentID int64
	Text    string // any text; entries matching any of its words rank
	// Channel is the audience: entries learned in another DM are left
	// out (bullpen.MemoryVisibleIn). A negative Channel leaves none out
	// (the agent's own page, for humans who may see them all).
	Channel int64
	Kind    string
	Limit   int
}

// memoryStopWords are left out of memory queries: a recall matches any
// word of a message, and these would match nearly every entry.
var memoryStopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by can could do does for from had has have he her
		him his i if in into is it its just me my no not of on or our please she so than that the their them then
		there these they this to too up us was we were what when where which who why will with would you your`) {
		memoryStopWords[w] = true
	}
}

// MemoryTerms returns the words of text a memory search uses: the search
// words (SearchTerms) without common English stop words.
func MemoryTerms(text string) []string {
	var out []string
	for _, t := range SearchTerms(text) {
		if !memoryStopWords[t] {
			out = append(out, t)
		}
	}
	return out
}

// A term in more of an agent's entries than broadTerm says little about
// which of them is relevant and makes ranking cost grow with the memory:
// when a query has rarer terms, its broad ones are left out. Ranking
// then reads at most memoryWindow matches, the newest, so that a recall
// stays within a few milliseconds at 10,000 entries whatever the query.
var (
	broadTerm    = 100
	memoryWindow = 200
)

// On PostgreSQL "agent_id + 0" keeps the planner on the full-text index:
// the agent's index would read every entry of the agent to find the few
// that match a rare word.

// MemorySearch returns the agent's confirmed entries (proposals are left
// out) matching any word of q.Text (both dialects stem English), best
// first, scored by bm25 on SQLite and ts_rank_cd on PostgreSQL (larger is
// better; the two scales differ). A query without words matches nothing.
func (db *DB) MemorySearch(ctx context.Context, q MemoryQuery) ([]bullpen.MemoryHit, error) {
	terms := MemoryTerms(q.Text)
	if len(terms) == 0 || q.Limit <= 0 {
		return []bullpen.MemoryHit{}, nil
	}
	terms, err := db.narrowTerms(ctx, q.AgentID, terms)
	if err != nil {
		return nil, fmt.Errorf("store: memory search: %w", err)
	}
	if len(terms) == 0 {
		return []bullpen.MemoryHit{}, nil
	}
	var filter string
	var fargs []any
	if q.Channel >= 0 {
		filter += " AND (e.channel_id = 0 OR e.channel_id = ?)"
		fargs = append(fargs, q.Channel)
	}
	if q.Kind != "" {
		filter += " AND e.kind = ?"
		fargs = append(fargs, q.Kind)
	}
	var sql string
	var args []any
	if db.dialect == Postgres {
		sql = "SELECT w.id, ts_rank_cd(w.search, q, 1) AS score FROM (SELECT e.id, e.search FROM memory_entries e " +
			"WHERE e.search @@ to_tsquery('english', ?) AND e.agent_id + 0 = ? AND e.proposed_to = 0" + filter +
			" ORDER BY e.id DESC LIMIT ?) w, to_tsquery('english', ?) q ORDER BY score DESC, w.id DESC LIMIT ?"
		match := pgQuery(terms)
		args = append(append([]any{match, q.AgentID}, fargs...), memoryWindow, match, q.Limit)
	} else {
		sql = "SELECT id, score FROM (SELECT e.id AS id, -bm25(memory_fts) AS score FROM memory_fts JOIN memory_entries e ON e.id = memory_fts.rowid " +
			"WHERE memory_fts MATCH ? AND e.agent_id = ? AND e.proposed_to = 0" + filter +
			" ORDER BY memory_fts.rowid DESC LIMIT ?) ORDER BY score DESC, id DESC LIMIT ?"
		args = append(append([]any{ftsQuery(terms, " OR "), q.AgentID}, fargs...), memoryWindow, q.Limit)
	}
	var hits []scoredID
	if err := db.searchRead(ctx, func(g *gorm.DB) error { return g.Raw(sql, args...).Scan(&hits).Error }); err != nil {
		return nil, fmt.Errorf("store: memory search: %w", err)
	}
	return db.memoryHits(ctx, hits)
}

// searchRead runs fn on a read connection; on PostgreSQL in a read
// transaction that keeps the planner off sequential scans, which it picks
// on fresh statistics and which read every tsvector (as WikiSearch does).
func (db *DB) searchRead(ctx context.Context, fn func(g *gorm.DB) error) error {
	if db.dialect != Postgres {
		return fn(db.read(ctx))
	}
	return db.read(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL enable_seqscan = off").Error; err != nil {
			return err
		}
		return fn(tx)
	})
}

// ftsQuery quotes terms (letters and digits only) for FTS5, joined by op.
func ftsQuery(terms []string, op string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + t + `"`
	}
	return strings.Join(parts, op)
}

// pgQuery is the tsquery of any of terms (letters and digits only).
func pgQuery(terms []string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = "'" + t + "'"
	}
	return strings.Join(parts, " | ")
}

// narrowTerms leaves out the terms that match no entry and, when others
// are left, those that match more than broadTerm of them. It counts each
// term's matches up to broadTerm in one statement (a short read of each
// term's index entry). On SQLite the count spans every agent's entries:
// the full-text index does not know agents.
func (db *DB) narrowTerms(ctx context.Context, agentID int64, terms []string) ([]string, error) {
	if len(terms) == 1 {
		return terms, nil
	}
	sel := make([]string, len(terms))
	var args []any
	for i, t := range terms {
		if db.dialect == Postgres {
			sel[i] = fmt.Sprintf("(SELECT count(*) FROM (SELECT 1 FROM memory_entries WHERE search @@ to_tsquery('english', ?) AND agent_id + 0 = ? LIMIT %d) s%d)", broadTerm+1, i)
			args = append(args, "'"+t+"'", agentID)
		} else {
			sel[i] = fmt.Sprintf("(SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT %d))", broadTerm+1)
			args = append(args, `"`+t+`"`)
		}
	}
	counts := make([]int64, len(terms))
	err := db.searchRead(ctx, func(g *gorm.DB) error {
		rows, err := g.Raw("SELECT "+strings.Join(sel, ", "), args...).Rows()
		if err != nil {
			return err
		}
		defer rows.Close()
		ptrs := make([]any, len(terms))
		for i := range counts {
			ptrs[i] = &counts[i]
		}
		if rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	var narrow, some []string
	for i, t := range terms {
		switch {
		case counts[i] == 0:
		case counts[i] <= int64(broadTerm):
			narrow = append(narrow, t)
		default:
			some = append(some, t)
		}
	}
	if len(narrow) > 0 {
		return narrow, nil
	}
	return some, nil
}

// memoryHits reads the entries of hits, in order.
func (db *DB) memoryHits(ctx context.Context, hits []scoredID) ([]bullpen.MemoryHit, error) {
	out := make([]bullpen.MemoryHit, 0, len(hits))
	if len(hits) == 0 {
		return out, nil
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	var rows []memoryRow
	if err := db.read(ctx).Select(memoryCols).Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: memory search: %w", err)
	}
	byID := map[int64]memoryRow{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	for _, h := range hits {
		if r, ok := byID[h.ID]; ok {
			out = append(out, bullpen.MemoryHit{Entry: r.entry(), Score: h.Score, Why: "match"})
		}
	}
	return out, nil
}
