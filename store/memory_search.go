package store

import (
	"context"
	"fmt"
	"slices"
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

// maxQueryTerms bounds the words a memory search weighs, whatever the
// length of the message that triggers it: each costs a read of its
// index entry (narrowTerms).
const maxQueryTerms = 8

// queryTerms are the words of text a memory search weighs: its distinct
// words other than stop words, across the whole text, the longest
// maxQueryTerms of them (longer words are rarer and say more), in the
// order they appear.
func queryTerms(text string) []string {
	var words []string
	seen := map[string]bool{}
	for _, w := range searchWords(text) {
		if !memoryStopWords[w] && !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	if len(words) <= maxQueryTerms {
		return words
	}
	byLen := slices.Clone(words)
	slices.SortStableFunc(byLen, func(a, b string) int { return len(b) - len(a) })
	keep := map[string]bool{}
	for _, w := range byLen[:maxQueryTerms] {
		keep[w] = true
	}
	return slices.DeleteFunc(words, func(w string) bool { return !keep[w] })
}

// A term in more of an agent's entries than broadTerm says little about
// which of them is relevant and makes ranking cost grow with the memory:
// when a query has rarer terms, its broad ones are left out. Ranking
// then reads at most memoryWindow matches, the newest (broadWindow when
// only broad terms are left: they match nearly anything, so the newest
// matches are the ones worth ranking), so that a recall stays within a
// few milliseconds at 10,000 entries whatever the query.
var (
	broadTerm    = 100
	memoryWindow = 200
	broadWindow  = 50
)

// MemorySearch returns the agent's confirmed entries (proposals are left
// out) matching any word of q.Text (both dialects stem English), best
// first, scored by bm25 on SQLite and ts_rank_cd on PostgreSQL (larger is
// better; the two scales differ). A query without words matches nothing.
func (db *DB) MemorySearch(ctx context.Context, q MemoryQuery) ([]bullpen.MemoryHit, error) {
	var hits []bullpen.MemoryHit
	err := db.searchRead(ctx, func(g *gorm.DB) (err error) {
		hits, err = db.memorySearchOn(g, q)
		return err
	})
	return hits, err
}

// MemoryRecallRead is what a recall reads, in one read: the agent's
// pinned entries the audience q.Channel may hear (PinnedMemory) and its
// best matches for q (MemorySearch). One read keeps a recall to a few
// statements on one connection.
func (db *DB) MemoryRecallRead(ctx context.Context, q MemoryQuery) ([]bullpen.MemoryEntry, []bullpen.MemoryHit, error) {
	var pinned []bullpen.MemoryEntry
	var hits []bullpen.MemoryHit
	err := db.searchRead(ctx, func(g *gorm.DB) (err error) {
		if pinned, err = pinnedOn(g, q.AgentID, q.Channel); err != nil {
			return err
		}
		hits, err = db.memorySearchOn(g, q)
		return err
	})
	return pinned, hits, err
}

// memorySearchOn is MemorySearch on g: it narrows the terms, then ranks
// the newest memoryWindow matches and reads the best q.Limit entries in
// the same statement.
func (db *DB) memorySearchOn(g *gorm.DB, q MemoryQuery) ([]bullpen.MemoryHit, error) {
	terms := queryTerms(q.Text)
	if len(terms) == 0 || q.Limit <= 0 {
		return []bullpen.MemoryHit{}, nil
	}
	terms, broad, err := db.narrowTerms(g, terms)
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
	var ranked string
	var args []any
	window := memoryWindow
	if broad {
		window = broadWindow
	}
	if db.dialect == Postgres {
		// "agent_id + 0" keeps the planner on the full-text index, which
		// finds the few matches of narrow terms; broad ones match so many
		// entries that walking the agent's index from the newest finds
		// memoryWindow of them sooner.
		agent := "e.agent_id + 0 = ?"
		if broad {
			agent = "e.agent_id = ?"
			if err := g.Exec("SET LOCAL enable_bitmapscan = off").Error; err != nil {
				return nil, fmt.Errorf("store: memory search: %w", err)
			}
		}
		ranked = "SELECT w.id, ts_rank_cd(w.search, q, 1) AS score FROM (SELECT e.id, e.search FROM memory_entries e " +
			"WHERE e.search @@ to_tsquery('english', ?) AND " + agent + " AND e.proposed_to = 0" + filter +
			" ORDER BY e.id DESC LIMIT ?) w, to_tsquery('english', ?) q"
		match := pgQuery(terms)
		args = append(append([]any{match, q.AgentID}, fargs...), window, match, q.Limit)
	} else {
		ranked = "SELECT id, score FROM (SELECT e.id AS id, -bm25(memory_fts) AS score FROM memory_fts JOIN memory_entries e ON e.id = memory_fts.rowid " +
			"WHERE memory_fts MATCH ? AND e.agent_id = ? AND e.proposed_to = 0" + filter +
			" ORDER BY memory_fts.rowid DESC LIMIT ?)"
		args = append(append([]any{ftsQuery(terms, " OR "), q.AgentID}, fargs...), window, q.Limit)
	}
	sql := "SELECT " + memoryColsOf("m") + ", b.score FROM (" + ranked + " ORDER BY score DESC, id DESC LIMIT ?) b " +
		"JOIN memory_entries m ON m.id = b.id ORDER BY b.score DESC, b.id DESC"
	var rows []scoredMemoryRow
	if err := g.Raw(sql, args...).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: memory search: %w", err)
	}
	out := make([]bullpen.MemoryHit, len(rows))
	for i, r := range rows {
		out[i] = bullpen.MemoryHit{Entry: r.Row.entry(), Score: r.Score, Why: "match"}
	}
	return out, nil
}

// scoredMemoryRow is an entry read with its search score.
type scoredMemoryRow struct {
	Row   memoryRow `gorm:"embedded"` // an exported field: gorm skips unexported ones
	Score float64
}

// memoryColsOf is memoryCols qualified by table alias t.
func memoryColsOf(t string) string {
	cols := make([]string, len(memoryCols))
	for i, c := range memoryCols {
		cols[i] = t + "." + c
	}
	return strings.Join(cols, ", ")
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
// term's index entry). The count spans every agent's entries: neither
// full-text index knows agents, and reading each match's row to learn
// its agent would cost more than the count saves. So a term common in
// other agents' memories counts as broad here too.
//
// broad reports that every term left is broad: then the newest matches
// are found faster by walking the agent's entries from the newest than
// by reading every match from the full-text index.
func (db *DB) narrowTerms(g *gorm.DB, terms []string) (_ []string, broad bool, _ error) {
	if len(terms) == 1 {
		return terms, false, nil
	}
	sel := make([]string, len(terms))
	var args []any
	for i, t := range terms {
		if db.dialect == Postgres {
			sel[i] = fmt.Sprintf("(SELECT count(*) FROM (SELECT 1 FROM memory_entries WHERE search @@ to_tsquery('english', ?) LIMIT %d) s%d)", broadTerm+1, i)
			args = append(args, "'"+t+"'")
		} else {
			sel[i] = fmt.Sprintf("(SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT %d))", broadTerm+1)
			args = append(args, `"`+t+`"`)
		}
	}
	counts := make([]int64, len(terms))
	err := func() error {
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
	}()
	if err != nil {
		return nil, false, err
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
		return narrow, false, nil
	}
	return some, len(some) > 0, nil
}
