package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
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

// MemorySearch returns the agent's confirmed entries (proposals are left
// out) matching any word of q.Text
// (both dialects stem English), best first, scored by bm25 on SQLite and
// ts_rank_cd on PostgreSQL (larger is better; the two scales differ). A
// query without words matches nothing.
func (db *DB) MemorySearch(ctx context.Context, q MemoryQuery) ([]bullpen.MemoryHit, error) {
	terms := MemoryTerms(q.Text)
	if len(terms) == 0 || q.Limit <= 0 {
		return []bullpen.MemoryHit{}, nil
	}
	var sql string
	var args []any
	if db.dialect == Postgres {
		parts := make([]string, len(terms))
		for i, t := range terms {
			parts[i] = "'" + t + "'" // letters and digits only
		}
		sql = "SELECT id, ts_rank_cd(search, q, 1) AS score FROM memory_entries, to_tsquery('english', ?) q " +
			"WHERE search @@ q AND agent_id = ? AND proposed_to = 0"
		args = []any{strings.Join(parts, " | "), q.AgentID}
	} else {
		parts := make([]string, len(terms))
		for i, t := range terms {
			parts[i] = `"` + t + `"`
		}
		sql = "SELECT e.id, -bm25(memory_fts) AS score FROM memory_fts JOIN memory_entries e ON e.id = memory_fts.rowid " +
			"WHERE memory_fts MATCH ? AND e.agent_id = ? AND e.proposed_to = 0"
		args = []any{strings.Join(parts, " OR "), q.AgentID}
	}
	if q.Channel >= 0 {
		sql += " AND (channel_id = 0 OR channel_id = ?)"
		args = append(args, q.Channel)
	}
	if q.Kind != "" {
		sql += " AND kind = ?"
		args = append(args, q.Kind)
	}
	sql += " ORDER BY score DESC, id DESC LIMIT ?"
	args = append(args, q.Limit)
	var hits []scoredID
	if err := db.read(ctx).Raw(sql, args...).Scan(&hits).Error; err != nil {
		return nil, fmt.Errorf("store: memory search: %w", err)
	}
	return db.memoryHits(ctx, hits)
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
