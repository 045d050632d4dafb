package store

import (
	"context"
	"fmt"
	"html"
	"strings"
	"time"
	"unicode"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm"
)

// Snippets mark matches between these two control characters, which page
// text cannot contain (bullpen.ValidateWikiText).
const (
	markOpen  = "\x02"
	markClose = "\x03"
)

// maxSearchTerms bounds how many words of a query are used.
const maxSearchTerms = 12

// WikiSearchQuery is a full-text search over live pages.
type WikiSearchQuery struct {
	Text   string // what the user typed; any text is safe
	Tag    string // only pages with this tag
	Prefix bool   // the last word also matches as a prefix (search as you type)
	Limit  int
}

// SearchTerms splits user text into the words a search uses: runs of
// letters and digits, lower-cased. Everything else, including every
// operator of FTS5 and tsquery syntax, separates words, so no query can be
// a syntax error.
func SearchTerms(text string) []string {
	var out []string
	for _, w := range searchWords(text) {
		if len(out) == maxSearchTerms {
			break
		}
		out = append(out, w)
	}
	return out
}

// searchWords is text lowercased and split into runs of letters and
// digits, the words both searches know.
func searchWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

type searchRow struct {
	Slug      string
	Title     string
	Tags      string
	Revision  int
	UpdatedAt time.Time
	Rank      float64
	Snippet   string
}

// WikiSearch returns the live pages matching every word of q.Text (or a
// form of it: both dialects stem English), best first, with snippets cut
// from the bodies of the pages returned. A query without words matches
// nothing.
func (db *DB) WikiSearch(ctx context.Context, q WikiSearchQuery) ([]bullpen.WikiSearchHit, error) {
	terms := SearchTerms(q.Text)
	if len(terms) == 0 {
		return []bullpen.WikiSearchHit{}, nil
	}
	plan := db.sqlitePlan(terms, q)
	if db.dialect == Postgres {
		plan = db.postgresPlan(terms, q)
	}
	hits, err := db.rank(ctx, plan, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("store: wiki search: %w", err)
	}
	rows, err := db.searchRows(ctx, hits, terms, q.Prefix)
	if err != nil {
		return nil, fmt.Errorf("store: wiki search: %w", err)
	}
	out := make([]bullpen.WikiSearchHit, len(rows))
	for i, r := range rows {
		out[i] = bullpen.WikiSearchHit{Slug: r.Slug, Title: r.Title, Tags: splitTags(r.Tags), Revision: r.Revision,
			UpdatedAt: r.UpdatedAt.UTC(), Rank: r.Rank, Snippet: plainSnippet(r.Snippet), SnippetHTML: htmlSnippet(r.Snippet)}
	}
	return out, nil
}

// Ranking every match costs a few microseconds a row (bm25 in this
// SQLite build, ts_rank_cd reading each tsvector in PostgreSQL), so a
// query that matches very many pages (a word in nearly every page) would
// take tens of milliseconds. Above broadMatches matches only two windows
// are ranked: the rankWindow newest pages with every word in their title
// or tags (shown first), then the rankWindow newest matches.
var (
	broadMatches = 1500
	rankWindow   = 500
)

// searchPlan holds a dialect's three queries: how many pages match (up to
// broadMatches), the best of all matches, and the best of the newest
// window of matches, of all text or (titled) of titles and tags only.
type searchPlan struct {
	count  func() (string, []any)
	ranked func(limit int) (string, []any)
	window func(titled bool, window, limit int) (string, []any)
}

type scoredID struct {
	ID    int64
	Score float64 // larger is better
}

// rank returns the ids of the best matches, best first. On PostgreSQL it
// runs in a read transaction that keeps the planner off sequential scans:
// with a word in every page it would pick one and decompress every
// page's tsvector, where the GIN index answers in a fraction of the time.
func (db *DB) rank(ctx context.Context, p searchPlan, limit int) ([]scoredID, error) {
	if db.dialect != Postgres {
		return rankWith(db.read(ctx), p, limit)
	}
	var hits []scoredID
	err := db.read(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL enable_seqscan = off").Error; err != nil {
			return err
		}
		var err error
		hits, err = rankWith(tx, p, limit)
		return err
	})
	return hits, err
}

func rankWith(g *gorm.DB, p searchPlan, limit int) ([]scoredID, error) {
	var n int64
	sql, args := p.count()
	if err := g.Raw(sql, args...).Scan(&n).Error; err != nil {
		return nil, err
	}
	var hits []scoredID
	if n < int64(broadMatches) {
		sql, args = p.ranked(limit)
		err := g.Raw(sql, args...).Scan(&hits).Error
		return hits, err
	}
	var first, rest []scoredID
	sql, args = p.window(true, rankWindow, limit)
	if err := g.Raw(sql, args...).Scan(&first).Error; err != nil {
		return nil, err
	}
	sql, args = p.window(false, rankWindow, limit)
	if err := g.Raw(sql, args...).Scan(&rest).Error; err != nil {
		return nil, err
	}
	return mergeHits(first, rest, limit), nil
}

// sqlitePlan uses FTS5 over live pages: each term is a quoted string (""
// escapes a quote), the last one with a prefix star if asked (prefixes
// longer than 3 characters merge many index entries and cost more). bm25
// weighs title 10, tags 4, body 1; it is smaller for better matches, so
// the score is its negation. FTS5 reads rowids in order by itself, so a
// window ranks only its own rows.
func (db *DB) sqlitePlan(terms []string, q WikiSearchQuery) searchPlan {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	if q.Prefix {
		parts[len(parts)-1] += "*"
	}
	match := strings.Join(parts, " ")
	titled := "{title tags} : (" + match + ")"
	var p searchPlan
	where := "wiki_fts MATCH ?"
	var tag []any
	if q.Tag != "" {
		// The column filter narrows inside FTS5 (the tag's words in a
		// row); the exact check runs only on those rows. "+" keeps SQLite
		// from handing it to FTS5 as one full-text query per rowid.
		var words []string
		for _, w := range SearchTerms(q.Tag) {
			words = append(words, `"`+w+`"`)
		}
		if len(words) > 0 {
			filter := " AND tags : (" + strings.Join(words, " + ") + ")"
			match, titled = "("+match+")"+filter, "("+titled+")"+filter
		}
		where += " AND +rowid IN (SELECT page_id FROM wiki_page_tags WHERE tag = ?)"
		tag = []any{q.Tag}
	}
	args := func(m string, more ...any) []any { return append(append([]any{m}, tag...), more...) }
	const score = "-bm25(wiki_fts, 10.0, 4.0, 1.0)"
	p.count = func() (string, []any) {
		return "SELECT count(*) FROM (SELECT 1 FROM wiki_fts WHERE " + where + " LIMIT ?)", args(match, broadMatches)
	}
	p.ranked = func(limit int) (string, []any) {
		return "SELECT rowid AS id, " + score + " AS score FROM wiki_fts WHERE " + where + " ORDER BY score DESC LIMIT ?", args(match, limit)
	}
	p.window = func(title bool, window, limit int) (string, []any) {
		m := match
		if title {
			m = titled
		}
		return "SELECT id, score FROM (SELECT rowid AS id, " + score + " AS score FROM wiki_fts WHERE " + where +
			" ORDER BY rowid DESC LIMIT ?) ORDER BY score DESC LIMIT ?", args(m, window, limit)
	}
	return p
}

// postgresPlan uses the generated tsvector columns and their GIN indexes:
// search (title weighted A, tags B, body C) and title_search (title and
// tags). Each term is a quoted lexeme (letters and digits only, so no
// other escaping is needed), the last one a prefix if asked, joined with
// &. A window's subquery reads its rows in id order; ranking runs on them
// alone.
func (db *DB) postgresPlan(terms []string, q WikiSearchQuery) searchPlan {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = "'" + strings.ReplaceAll(t, "'", "''") + "'"
	}
	if q.Prefix {
		parts[len(parts)-1] += ":*"
	}
	match := strings.Join(parts, " & ")
	where := func(col string) string {
		w := col + " @@ to_tsquery('english', ?) AND p.deleted_at IS NULL"
		if q.Tag != "" {
			w += " AND p.id IN (SELECT page_id FROM wiki_page_tags WHERE tag = ?)"
		}
		return w
	}
	args := func(more ...any) []any {
		a := []any{match, match}
		if q.Tag != "" {
			a = append(a, q.Tag)
		}
		return append(a, more...)
	}
	var p searchPlan
	p.count = func() (string, []any) {
		return "SELECT count(*) FROM (SELECT 1 FROM wiki_pages p WHERE " + where("p.search") + " LIMIT ?) s", args(broadMatches)[1:]
	}
	p.ranked = func(limit int) (string, []any) {
		return "SELECT p.id, ts_rank_cd(p.search, to_tsquery('english', ?), 1) AS score FROM wiki_pages p WHERE " +
			where("p.search") + " ORDER BY score DESC, p.id LIMIT ?", args(limit)
	}
	p.window = func(titled bool, window, limit int) (string, []any) {
		col := "p.search"
		if titled {
			col = "p.title_search"
		}
		return "SELECT id, ts_rank_cd(v, to_tsquery('english', ?), 1) AS score FROM (SELECT p.id, " + col + " AS v FROM wiki_pages p WHERE " +
			where(col) + " ORDER BY p.id DESC LIMIT ?) w ORDER BY score DESC, id LIMIT ?", args(window, limit)
	}
	return p
}

// mergeHits appends the hits of rest that are not in first, up to limit.
func mergeHits(first, rest []scoredID, limit int) []scoredID {
	seen := map[int64]bool{}
	for _, h := range first {
		seen[h.ID] = true
	}
	for _, h := range rest {
		if len(first) >= limit {
			break
		}
		if !seen[h.ID] {
			first = append(first, h)
		}
	}
	return first
}

// searchRows reads the pages of the hits, in order, with snippets.
func (db *DB) searchRows(ctx context.Context, hits []scoredID, terms []string, prefix bool) ([]searchRow, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	var pages []wikiPageRow
	if err := db.read(ctx).Where("id IN ?", ids).Find(&pages).Error; err != nil {
		return nil, err
	}
	byID := map[int64]*wikiPageRow{}
	for i := range pages {
		byID[pages[i].ID] = &pages[i]
	}
	out := make([]searchRow, 0, len(hits))
	for _, h := range hits {
		if p := byID[h.ID]; p != nil {
			out = append(out, searchRow{Slug: p.Slug, Title: p.Title, Tags: p.Tags, Revision: p.Revision,
				UpdatedAt: p.UpdatedAt, Rank: h.Score, Snippet: snippet(bullpen.MarkdownText(p.Body), terms, prefix, snippetWords)})
		}
	}
	return out, nil
}

func plainSnippet(s string) string {
	return strings.NewReplacer(markOpen, "", markClose, "").Replace(s)
}

// htmlSnippet escapes the snippet and turns the markers into <mark>,
// closing one left open.
func htmlSnippet(s string) string {
	var b strings.Builder
	open := false
	for {
		i := strings.IndexAny(s, markOpen+markClose)
		if i < 0 {
			b.WriteString(html.EscapeString(s))
			break
		}
		b.WriteString(html.EscapeString(s[:i]))
		switch {
		case s[i] == markOpen[0] && !open:
			b.WriteString("<mark>")
			open = true
		case s[i] == markClose[0] && open:
			b.WriteString("</mark>")
			open = false
		}
		s = s[i+1:]
	}
	if open {
		b.WriteString("</mark>")
	}
	return b.String()
}
