package store

import (
	"context"
	"fmt"

	"github.com/bullpen-hq/bullpen"
)

type wikiLinkRow struct {
	FromPageID int64  `gorm:"primaryKey"`
	Target     string `gorm:"primaryKey"`
	Label      string
}

func (wikiLinkRow) TableName() string { return "wiki_links" }

// SetWikiLinks replaces the outgoing links of a page.
func (tx *Tx) SetWikiLinks(pageID int64, links []bullpen.WikiLink) error {
	if err := tx.g.Where("from_page_id = ?", pageID).Delete(&wikiLinkRow{}).Error; err != nil {
		return fmt.Errorf("store: clear wiki links: %w", err)
	}
	if len(links) == 0 {
		return nil
	}
	rows := make([]wikiLinkRow, 0, len(links))
	seen := map[string]bool{}
	for _, l := range links {
		if !seen[l.Target] {
			seen[l.Target] = true
			rows = append(rows, wikiLinkRow{FromPageID: pageID, Target: l.Target, Label: l.Label})
		}
	}
	if err := tx.g.CreateInBatches(rows, 200).Error; err != nil {
		return fmt.Errorf("store: insert wiki links: %w", err)
	}
	return nil
}

// A link target resolves to the live page with that slug, else to the
// oldest live page whose slugified title is the target.

// WikiResolve maps each target that a live page answers to that page.
func (db *DB) WikiResolve(ctx context.Context, targets []string) (map[string]bullpen.WikiPageRef, error) {
	out := map[string]bullpen.WikiPageRef{}
	if len(targets) == 0 {
		return out, nil
	}
	var rows []wikiPageRow
	err := db.read(ctx).Select("id, slug, title, title_key").
		Where("deleted_at IS NULL AND (slug IN ? OR title_key IN ?)", targets, targets).Order("id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: resolve wiki links: %w", err)
	}
	for _, r := range rows { // title matches first, oldest wins ...
		if _, ok := out[r.TitleKey]; !ok {
			out[r.TitleKey] = bullpen.WikiPageRef{Slug: r.Slug, Title: r.Title}
		}
	}
	for _, r := range rows { // ... then slugs override them
		out[r.Slug] = bullpen.WikiPageRef{Slug: r.Slug, Title: r.Title}
	}
	for k := range out {
		if !contains(targets, k) {
			delete(out, k)
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// WikiBacklinks lists the live pages that link to page, by title.
func (db *DB) WikiBacklinks(ctx context.Context, page bullpen.WikiPage) ([]bullpen.WikiPageRef, error) {
	var out []bullpen.WikiPageRef
	titleKey := bullpen.WikiSlugify(page.Title)
	err := db.read(ctx).Raw(`SELECT DISTINCT f.slug, f.title, f.title_key FROM wiki_links l
		JOIN wiki_pages f ON f.id = l.from_page_id AND f.deleted_at IS NULL
		WHERE f.id <> ? AND (l.target = ? OR (l.target = ? AND NOT EXISTS (
			SELECT 1 FROM wiki_pages s WHERE s.slug = l.target AND s.deleted_at IS NULL)))
		ORDER BY f.title_key, f.slug`, page.ID, page.Slug, titleKey).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: wiki backlinks: %w", err)
	}
	return out, nil
}

// WikiLinks returns the outgoing links of a page.
func (db *DB) WikiLinks(ctx context.Context, pageID int64) ([]bullpen.WikiLink, error) {
	var out []bullpen.WikiLink
	err := db.read(ctx).Model(&wikiLinkRow{}).Select("target, label").Where("from_page_id = ?", pageID).
		Order("target").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: wiki links: %w", err)
	}
	return out, nil
}

// WikiWanted lists up to limit link targets that no live page answers,
// most linked first, each with the live pages that link to it.
func (db *DB) WikiWanted(ctx context.Context, limit int) ([]bullpen.WikiWanted, error) {
	var rows []struct {
		Target, Label string
		Count         int
	}
	err := db.read(ctx).Raw(`SELECT l.target, MIN(l.label) AS label, COUNT(*) AS count FROM wiki_links l
		JOIN wiki_pages f ON f.id = l.from_page_id AND f.deleted_at IS NULL
		WHERE NOT EXISTS (SELECT 1 FROM wiki_pages p WHERE p.deleted_at IS NULL AND (p.slug = l.target OR p.title_key = l.target))
		GROUP BY l.target ORDER BY COUNT(*) DESC, l.target LIMIT ?`, limit).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: wanted wiki pages: %w", err)
	}
	out := make([]bullpen.WikiWanted, len(rows))
	targets := make([]string, len(rows))
	for i, r := range rows {
		out[i] = bullpen.WikiWanted{Target: r.Target, Label: r.Label, Count: r.Count}
		targets[i] = r.Target
	}
	if len(out) == 0 {
		return out, nil
	}
	var from []struct {
		Target, Slug, Title string
	}
	err = db.read(ctx).Raw(`SELECT l.target, f.slug, f.title FROM wiki_links l
		JOIN wiki_pages f ON f.id = l.from_page_id AND f.deleted_at IS NULL
		WHERE l.target IN ? ORDER BY f.title_key, f.slug`, targets).Scan(&from).Error
	if err != nil {
		return nil, fmt.Errorf("store: wanted wiki pages: %w", err)
	}
	idx := map[string]int{}
	for i, w := range out {
		idx[w.Target] = i
		out[i].From = []bullpen.WikiPageRef{}
	}
	for _, f := range from {
		i := idx[f.Target]
		out[i].From = append(out[i].From, bullpen.WikiPageRef{Slug: f.Slug, Title: f.Title})
	}
	return out, nil
}
