package wiki

import (
	"context"
	"errors"
	"fmt"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// The methods in this file are the wiki as agents use it (agents.Wiki and
// agents.WikiTx): typed, by title, and with errors whose
// bullpen.ErrorMessage tells a model what to do next. The tools' names,
// descriptions and schemas live in the agents tool registry.

// SearchPages returns at most limit (1-20; 0 means 5) live pages matching
// query, best first, with plain-text snippets.
func (w *Wiki) SearchPages(ctx context.Context, actor bullpen.Member, query string, limit int) ([]bullpen.WikiSearchHit, error) {
	if limit == 0 {
		limit = 5
	}
	hits, err := w.Search(ctx, actor, bullpen.WikiSearchOptions{Query: query, Limit: min(max(limit, 1), 20)})
	if err != nil {
		return nil, toolError(err)
	}
	return hits, nil
}

// ReadPage returns the current revision of a live page, found by slug,
// else by title, with its authors' handles.
func (w *Wiki) ReadPage(ctx context.Context, actor bullpen.Member, page string) (bullpen.WikiPage, error) {
	slug := bullpen.WikiSlugify(page)
	if slug == "" {
		return bullpen.WikiPage{}, bullpen.Errorf(bullpen.EINVALID, "invalid arguments: page must be a page's slug or title")
	}
	if found, err := w.db.WikiResolve(ctx, []string{slug}); err == nil && found[slug].Slug != "" {
		slug = found[slug].Slug
	}
	p, err := w.page(ctx, actor, slug, false)
	if err != nil {
		return bullpen.WikiPage{}, toolError(err)
	}
	pages := []bullpen.WikiPage{p}
	if err := w.authors(ctx, pages); err != nil {
		return bullpen.WikiPage{}, toolError(err)
	}
	return pages[0], nil
}

// WritePage saves a page by title as actor. baseRevision is the revision
// the body edits, 0 to create a page; a stale one fails with a
// *bullpen.WikiConflictError whose message names the current revision ("conflict:
// page "x" changed since revision 3; current revision is 4; re-read and
// merge").
func (w *Wiki) WritePage(ctx context.Context, actor bullpen.Member, title, body string, baseRevision int) (bullpen.WikiPage, error) {
	return w.WritePageWith(ctx, actor, title, body, baseRevision, nil)
}

// WritePageWith is WritePage that runs fn in the save's transaction (see
// SaveWith): an agent's record of the write commits with it.
func (w *Wiki) WritePageWith(ctx context.Context, actor bullpen.Member, title, body string, baseRevision int,
	fn func(tx *store.Tx, p bullpen.WikiPage) error) (bullpen.WikiPage, error) {
	p, err := w.SaveWith(ctx, actor, bullpen.WikiSaveInput{Title: title, Body: body, BaseRevision: baseRevision}, fn)
	if err != nil {
		return bullpen.WikiPage{}, toolError(err)
	}
	return p, nil
}

// toolError rewrites an error's message so that a model knows what to do
// next. Conflicts keep their *ConflictError (with the current page).
func toolError(err error) error {
	var ce *bullpen.WikiConflictError
	if errors.As(err, &ce) {
		return err
	}
	code, msg := bullpen.ErrorCode(err), bullpen.ErrorMessage(err)
	switch code {
	case bullpen.ENOTFOUND:
		msg = fmt.Sprintf("not found: %s; use wiki_search to find pages, or wiki_write with base_revision 0 to create one", msg)
	case bullpen.EINVALID, bullpen.ETOOLARGE:
		msg = "invalid arguments: " + msg
	case bullpen.EINTERNAL:
		msg = "the wiki failed; try again later"
	}
	return &bullpen.Error{Code: code, Message: msg, Err: err}
}
