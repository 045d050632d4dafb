package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
)

type wikiPageRow struct {
	ID        int64 `gorm:"primaryKey"`
	Slug      string
	Title     string
	TitleKey  string
	Body      string
	Tags      string
	Revision  int
	CreatedBy int64
	CreatedAt time.Time
	UpdatedBy int64
	UpdatedAt time.Time
	DeletedBy *int64
	DeletedAt *time.Time
}

func (wikiPageRow) TableName() string { return "wiki_pages" }

func (r *wikiPageRow) toPage() bullpen.WikiPage {
	return bullpen.WikiPage{ID: r.ID, Slug: r.Slug, Title: r.Title, Body: r.Body, Tags: splitTags(r.Tags),
		Revision: r.Revision, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC(), UpdatedBy: r.UpdatedBy,
		UpdatedAt: r.UpdatedAt.UTC(), Deleted: r.DeletedAt != nil}
}

type wikiRevisionRow struct {
	ID           int64 `gorm:"primaryKey"`
	PageID       int64
	Number       int
	Title        string
	Body         string
	Tags         string
	Summary      string
	AuthorID     int64
	RestoredFrom *int
	CreatedAt    time.Time
}

func (wikiRevisionRow) TableName() string { return "wiki_revisions" }

func (r *wikiRevisionRow) toRevision(slug string) bullpen.WikiRevision {
	rev := bullpen.WikiRevision{PageID: r.PageID, Slug: slug, Number: r.Number, Title: r.Title, Body: r.Body,
		Tags: splitTags(r.Tags), Summary: r.Summary, AuthorID: r.AuthorID, CreatedAt: r.CreatedAt.UTC()}
	if r.RestoredFrom != nil {
		rev.RestoredFrom = *r.RestoredFrom
	}
	return rev
}

type wikiTagRow struct {
	PageID int64  `gorm:"primaryKey"`
	Tag    string `gorm:"primaryKey"`
}

func (wikiTagRow) TableName() string { return "wiki_page_tags" }

func splitTags(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, " ")
}

// WikiPageForWrite returns a page (deleted or not) inside the transaction,
// so that a save checks its base revision against what it will replace.
func (tx *Tx) WikiPageForWrite(slug string) (bullpen.WikiPage, error) {
	var row wikiPageRow
	if err := tx.g.Where("slug = ?", slug).First(&row).Error; err != nil {
		return bullpen.WikiPage{}, notFound(err, "wiki page %q not found", slug)
	}
	return row.toPage(), nil
}

// CreateWikiPage inserts a page at p.Revision; a taken slug is ECONFLICT.
func (tx *Tx) CreateWikiPage(p bullpen.WikiPage) (bullpen.WikiPage, error) {
	row := wikiPageRow{Slug: p.Slug, Title: p.Title, TitleKey: bullpen.WikiSlugify(p.Title), Body: p.Body,
		Tags: strings.Join(p.Tags, " "), Revision: p.Revision, CreatedBy: p.CreatedBy, CreatedAt: tx.now,
		UpdatedBy: p.UpdatedBy, UpdatedAt: tx.now}
	if err := tx.g.Create(&row).Error; err != nil {
		if isUniqueViolation(err) {
			return bullpen.WikiPage{}, bullpen.Errorf(bullpen.ECONFLICT, "wiki page %q already exists", p.Slug)
		}
		return bullpen.WikiPage{}, fmt.Errorf("store: insert wiki page: %w", err)
	}
	return row.toPage(), nil
}

// UpdateWikiPage replaces a page's content with p (at p.Revision) when its
// stored revision is still base; otherwise nothing changes and the result
// is ECONFLICT. An update also undeletes.
func (tx *Tx) UpdateWikiPage(p bullpen.WikiPage, base int) (bullpen.WikiPage, error) {
	res := tx.g.Model(&wikiPageRow{}).Where("id = ? AND revision = ?", p.ID, base).Updates(map[string]any{
		"title": p.Title, "title_key": bullpen.WikiSlugify(p.Title), "body": p.Body, "tags": strings.Join(p.Tags, " "),
		"revision": p.Revision, "updated_by": p.UpdatedBy, "updated_at": tx.now, "deleted_by": nil, "deleted_at": nil,
	})
	if res.Error != nil {
		return bullpen.WikiPage{}, fmt.Errorf("store: update wiki page: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.WikiPage{}, bullpen.Errorf(bullpen.ECONFLICT, "wiki page %q changed since revision %d", p.Slug, base)
	}
	p.UpdatedAt, p.Deleted = tx.now, false
	return p, nil
}

// SetWikiPageDeleted marks a page deleted by a member, or live again.
func (tx *Tx) SetWikiPageDeleted(pageID, by int64, deleted bool) error {
	set := map[string]any{"deleted_by": nil, "deleted_at": nil}
	if deleted {
		set = map[string]any{"deleted_by": by, "deleted_at": tx.now}
	}
	if err := tx.g.Model(&wikiPageRow{}).Where("id = ?", pageID).Updates(set).Error; err != nil {
		return fmt.Errorf("store: mark wiki page deleted: %w", err)
	}
	return nil
}

// AddWikiRevision stores a revision; a taken number is ECONFLICT.
func (tx *Tx) AddWikiRevision(r bullpen.WikiRevision) (bullpen.WikiRevision, error) {
	row := wikiRevisionRow{PageID: r.PageID, Number: r.Number, Title: r.Title, Body: r.Body,
		Tags: strings.Join(r.Tags, " "), Summary: r.Summary, AuthorID: r.AuthorID, CreatedAt: tx.now}
	if r.RestoredFrom != 0 {
		row.RestoredFrom = &r.RestoredFrom
	}
	if err := tx.g.Create(&row).Error; err != nil {
		if isUniqueViolation(err) {
			return bullpen.WikiRevision{}, bullpen.Errorf(bullpen.ECONFLICT, "revision %d of %q already exists", r.Number, r.Slug)
		}
		return bullpen.WikiRevision{}, fmt.Errorf("store: insert wiki revision: %w", err)
	}
	return row.toRevision(r.Slug), nil
}

// SetWikiTags replaces the tags of a page.
func (tx *Tx) SetWikiTags(pageID int64, tags []string) error {
	if err := tx.g.Where("page_id = ?", pageID).Delete(&wikiTagRow{}).Error; err != nil {
		return fmt.Errorf("store: clear wiki tags: %w", err)
	}
	if len(tags) == 0 {
		return nil
	}
	rows := make([]wikiTagRow, len(tags))
	for i, t := range tags {
		rows[i] = wikiTagRow{PageID: pageID, Tag: t}
	}
	if err := tx.g.Create(&rows).Error; err != nil {
		return fmt.Errorf("store: insert wiki tags: %w", err)
	}
	return nil
}

// WikiPage returns a page by slug, deleted or not.
func (db *DB) WikiPage(ctx context.Context, slug string) (bullpen.WikiPage, error) {
	var row wikiPageRow
	if err := db.read(ctx).Where("slug = ?", slug).First(&row).Error; err != nil {
		return bullpen.WikiPage{}, notFound(err, "wiki page %q not found", slug)
	}
	return row.toPage(), nil
}

// WikiPageFilter selects pages for WikiPages.
type WikiPageFilter struct {
	Tag      string // only pages with this tag
	Deleted  bool   // deleted pages instead of live ones
	ByUpdate bool   // most recently updated first, instead of by title
	WithBody bool   // fill Body
	ByID     bool   // by ID, after AfterID (export batches)
	AfterID  int64
	Limit    int
	Offset   int
}

// WikiPages lists pages.
func (db *DB) WikiPages(ctx context.Context, f WikiPageFilter) ([]bullpen.WikiPage, error) {
	q := db.read(ctx).Model(&wikiPageRow{})
	if !f.WithBody {
		q = q.Select("id, slug, title, tags, revision, created_by, created_at, updated_by, updated_at, deleted_at")
	}
	if f.Deleted {
		q = q.Where("deleted_at IS NOT NULL")
	} else {
		q = q.Where("deleted_at IS NULL")
	}
	if f.Tag != "" {
		q = q.Where("id IN (?)", db.read(ctx).Model(&wikiTagRow{}).Select("page_id").Where("tag = ?", f.Tag))
	}
	switch {
	case f.ByID:
		q = q.Where("id > ?", f.AfterID).Order("id")
	case f.ByUpdate:
		q = q.Order("updated_at DESC, id DESC")
	default:
		q = q.Order("title_key, id")
	}
	var rows []wikiPageRow
	if err := q.Limit(f.Limit).Offset(f.Offset).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list wiki pages: %w", err)
	}
	out := make([]bullpen.WikiPage, len(rows))
	for i := range rows {
		out[i] = rows[i].toPage()
	}
	return out, nil
}

// WikiRevisions lists a page's revisions without bodies, newest first.
func (db *DB) WikiRevisions(ctx context.Context, page bullpen.WikiPage) ([]bullpen.WikiRevision, error) {
	var rows []wikiRevisionRow
	err := db.read(ctx).Select("id, page_id, number, title, tags, summary, author_id, restored_from, created_at").
		Where("page_id = ?", page.ID).Order("number DESC").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: list wiki revisions: %w", err)
	}
	out := make([]bullpen.WikiRevision, len(rows))
	for i := range rows {
		out[i] = rows[i].toRevision(page.Slug)
	}
	return out, nil
}

// WikiRevision returns revision n of a page.
func (db *DB) WikiRevision(ctx context.Context, page bullpen.WikiPage, n int) (bullpen.WikiRevision, error) {
	var row wikiRevisionRow
	if err := db.read(ctx).Where("page_id = ? AND number = ?", page.ID, n).First(&row).Error; err != nil {
		return bullpen.WikiRevision{}, notFound(err, "revision %d of %q not found", n, page.Slug)
	}
	return row.toRevision(page.Slug), nil
}

// WikiTags lists the tags of live pages with their counts, by tag.
func (db *DB) WikiTags(ctx context.Context) ([]bullpen.WikiTagCount, error) {
	var out []bullpen.WikiTagCount
	err := db.read(ctx).Model(&wikiTagRow{}).Select("tag, COUNT(*) AS count").
		Where("page_id IN (?)", db.read(ctx).Model(&wikiPageRow{}).Select("id").Where("deleted_at IS NULL")).
		Group("tag").Order("tag").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: wiki tags: %w", err)
	}
	return out, nil
}

// WikiSummaries returns the summary of each page's current revision.
func (db *DB) WikiSummaries(ctx context.Context, pageIDs []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(pageIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		PageID  int64
		Summary string
	}
	err := db.read(ctx).Raw(`SELECT r.page_id, r.summary FROM wiki_revisions r
		JOIN wiki_pages p ON p.id = r.page_id AND p.revision = r.number WHERE p.id IN ?`, pageIDs).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: wiki summaries: %w", err)
	}
	for _, r := range rows {
		out[r.PageID] = r.Summary
	}
	return out, nil
}
