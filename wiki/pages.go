package wiki

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Save stores a new revision of a page by actor, or creates the page when
// BaseRevision is 0. A save whose base is not the current revision, or
// that creates a page that exists, fails with a *bullpen.WikiConflictError holding the
// current page: nothing is overwritten. A save that changes nothing
// returns the page as it is, without a new revision.
// Errors: EINVALID, ETOOLARGE, ENOTFOUND (no page at a non-zero base),
// ECONFLICT.
func (w *Wiki) Save(ctx context.Context, actor bullpen.Member, in bullpen.WikiSaveInput) (bullpen.WikiPage, error) {
	return w.SaveWith(ctx, actor, in, nil)
}

// SaveWith is Save that also runs fn (when not nil) in the save's
// transaction, after the revision is stored, so that a caller's own rows
// (an agent's record that this write happened) commit or roll back with it.
func (w *Wiki) SaveWith(ctx context.Context, actor bullpen.Member, in bullpen.WikiSaveInput, fn func(tx *store.Tx, p bullpen.WikiPage) error) (bullpen.WikiPage, error) {
	if err := requireMember(actor); err != nil {
		return bullpen.WikiPage{}, err
	}
	if err := in.Normalize(); err != nil {
		return bullpen.WikiPage{}, err
	}
	var page bullpen.WikiPage
	_, err := w.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if page, _, err = w.save(tx, actor, in, saveOpts{}); err != nil || fn == nil {
			return err
		}
		return fn(tx, page)
	})
	return w.finish(ctx, page, err)
}

// finish fills author handles of the result, or of a conflict's page.
func (w *Wiki) finish(ctx context.Context, page bullpen.WikiPage, err error) (bullpen.WikiPage, error) {
	var ce *bullpen.WikiConflictError
	if errors.As(err, &ce) {
		pages := []bullpen.WikiPage{ce.Current}
		if w.authors(ctx, pages) == nil {
			ce.Current = pages[0]
		}
		return bullpen.WikiPage{}, err
	}
	if err != nil {
		return bullpen.WikiPage{}, err
	}
	pages := []bullpen.WikiPage{page}
	if err := w.authors(ctx, pages); err != nil {
		return bullpen.WikiPage{}, err
	}
	return pages[0], nil
}

type saveOpts struct {
	restoredFrom int  // the revision a restore copies
	undelete     bool // imports may bring a deleted page back
}

// save writes one revision inside tx and emits its event. It reports
// whether anything changed.
func (w *Wiki) save(tx *store.Tx, actor bullpen.Member, in bullpen.WikiSaveInput, o saveOpts) (bullpen.WikiPage, bool, error) {
	cur, err := tx.WikiPageForWrite(in.Slug)
	exists := err == nil
	switch {
	case err != nil && !bullpen.IsCode(err, bullpen.ENOTFOUND):
		return cur, false, err
	case in.Tags == nil && exists:
		in.Tags = cur.Tags
	case in.Tags == nil:
		in.Tags = []string{}
	}
	switch {
	case !exists && in.BaseRevision != 0:
		return cur, false, bullpen.Errorf(bullpen.ENOTFOUND,
			"wiki page %q not found; save with base_revision 0 to create it", in.Slug)
	case exists && (in.BaseRevision != cur.Revision || (cur.Deleted && !o.undelete)):
		return cur, false, newConflict(in.BaseRevision, cur)
	case exists && !cur.Deleted && cur.Title == in.Title && cur.Body == in.Body && slices.Equal(cur.Tags, in.Tags):
		return cur, false, nil
	}
	next := bullpen.WikiPage{ID: cur.ID, Slug: in.Slug, Title: in.Title, Body: in.Body, Tags: in.Tags,
		Revision: cur.Revision + 1, CreatedBy: cur.CreatedBy, CreatedAt: cur.CreatedAt, UpdatedBy: actor.ID}
	if exists {
		next, err = tx.UpdateWikiPage(next, cur.Revision)
	} else {
		next.CreatedBy = actor.ID
		next, err = tx.CreateWikiPage(next)
	}
	if err != nil {
		return next, false, err
	}
	rev := bullpen.WikiRevision{PageID: next.ID, Slug: next.Slug, Number: next.Revision, Title: next.Title,
		Body: next.Body, Tags: next.Tags, Summary: in.Summary, AuthorID: actor.ID, RestoredFrom: o.restoredFrom}
	if _, err := tx.AddWikiRevision(rev); err != nil {
		return next, false, err
	}
	if err := tx.SetWikiLinks(next.ID, Links(next.Body)); err != nil {
		return next, false, err
	}
	if err := tx.SetWikiTags(next.ID, next.Tags); err != nil {
		return next, false, err
	}
	added, removed := lineCounts(cur.Body, next.Body, exists)
	_, err = tx.Emit(bullpen.EventWikiPageSaved, 0, nil, bullpen.WikiEvent{Slug: next.Slug, Title: next.Title,
		Revision: next.Revision, Author: actor.Handle, AuthorID: actor.ID, Summary: in.Summary,
		RestoredFrom: o.restoredFrom, Created: !exists, Added: added, Removed: removed})
	return next, true, err
}

// Page returns a live page with its rendered HTML. Deleted pages are
// ENOTFOUND unless includeDeleted.
func (w *Wiki) Page(ctx context.Context, actor bullpen.Member, slug string, includeDeleted bool) (bullpen.WikiPage, error) {
	p, err := w.page(ctx, actor, slug, includeDeleted)
	if err != nil {
		return p, err
	}
	if p.HTML, err = w.render(ctx, p.Body); err != nil {
		return p, err
	}
	return w.finish(ctx, p, nil)
}

func (w *Wiki) page(ctx context.Context, actor bullpen.Member, slug string, includeDeleted bool) (bullpen.WikiPage, error) {
	if err := requireMember(actor); err != nil {
		return bullpen.WikiPage{}, err
	}
	if err := bullpen.ValidateWikiSlug(slug); err != nil {
		return bullpen.WikiPage{}, bullpen.Errorf(bullpen.ENOTFOUND, "wiki page %q not found", clipRunes(slug, 100))
	}
	p, err := w.db.WikiPage(ctx, slug)
	if err == nil && p.Deleted && !includeDeleted {
		err = bullpen.Errorf(bullpen.ENOTFOUND, "wiki page %q was deleted", slug)
	}
	return p, err
}

// List returns pages without their bodies.
func (w *Wiki) List(ctx context.Context, actor bullpen.Member, o bullpen.WikiListOptions) ([]bullpen.WikiPage, error) {
	if err := requireMember(actor); err != nil {
		return nil, err
	}
	if o.Limit == 0 {
		o.Limit = 100
	}
	if o.Limit < 1 || o.Limit > 500 || o.Offset < 0 {
		return nil, bullpen.Errorf(bullpen.EINVALID, "limit must be between 1 and 500 and offset not negative")
	}
	if o.Tag != "" {
		tags, err := bullpen.NormalizeWikiTags([]string{o.Tag})
		if err != nil {
			return nil, err
		}
		o.Tag = tags[0]
	}
	pages, err := w.db.WikiPages(ctx, store.WikiPageFilter{Tag: o.Tag, Deleted: o.Deleted, ByUpdate: o.ByUpdate,
		Limit: o.Limit, Offset: o.Offset})
	if err != nil {
		return nil, err
	}
	return pages, w.authors(ctx, pages)
}

// Tags lists the tags of live pages with their counts.
func (w *Wiki) Tags(ctx context.Context, actor bullpen.Member) ([]bullpen.WikiTagCount, error) {
	if err := requireMember(actor); err != nil {
		return nil, err
	}
	tags, err := w.db.WikiTags(ctx)
	if tags == nil {
		tags = []bullpen.WikiTagCount{}
	}
	return tags, err
}

// Delete marks a live page deleted. Its revisions stay; Undelete brings
// it back. Errors: ENOTFOUND.
func (w *Wiki) Delete(ctx context.Context, actor bullpen.Member, slug string) (bullpen.WikiPage, error) {
	return w.setDeleted(ctx, actor, slug, true)
}

// Undelete brings a deleted page back at its last revision. Errors:
// ENOTFOUND, ECONFLICT (the page is not deleted).
func (w *Wiki) Undelete(ctx context.Context, actor bullpen.Member, slug string) (bullpen.WikiPage, error) {
	return w.setDeleted(ctx, actor, slug, false)
}

func (w *Wiki) setDeleted(ctx context.Context, actor bullpen.Member, slug string, del bool) (bullpen.WikiPage, error) {
	if err := requireMember(actor); err != nil {
		return bullpen.WikiPage{}, err
	}
	if bullpen.ValidateWikiSlug(slug) != nil {
		return bullpen.WikiPage{}, bullpen.Errorf(bullpen.ENOTFOUND, "wiki page %q not found", clipRunes(slug, 100))
	}
	var page bullpen.WikiPage
	_, err := w.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if page, err = tx.WikiPageForWrite(slug); err != nil {
			return err
		}
		switch {
		case del && page.Deleted:
			return bullpen.Errorf(bullpen.ENOTFOUND, "wiki page %q is already deleted", slug)
		case !del && !page.Deleted:
			return bullpen.Errorf(bullpen.ECONFLICT, "wiki page %q is not deleted", slug)
		}
		if err := tx.SetWikiPageDeleted(page.ID, actor.ID, del); err != nil {
			return err
		}
		page.Deleted = del
		typ := bullpen.EventWikiPageUndeleted
		if del {
			typ = bullpen.EventWikiPageDeleted
		}
		_, err = tx.Emit(typ, 0, nil, bullpen.WikiEvent{Slug: page.Slug, Title: page.Title, Revision: page.Revision,
			Author: actor.Handle, AuthorID: actor.ID})
		return err
	})
	return w.finish(ctx, page, err)
}

// Restore saves the content of an old revision as a new revision. When
// base is not 0 it must be the current revision (else ECONFLICT). Errors:
// ENOTFOUND, ECONFLICT (also for a deleted page).
func (w *Wiki) Restore(ctx context.Context, actor bullpen.Member, slug string, number, base int, summary string) (bullpen.WikiPage, error) {
	cur, err := w.page(ctx, actor, slug, true)
	if err != nil {
		return cur, err
	}
	old, err := w.db.WikiRevision(ctx, cur, number)
	if err != nil {
		return cur, err
	}
	if summary == "" {
		summary = fmt.Sprintf("Restored revision %d", number)
	}
	if base == 0 {
		base = cur.Revision
	}
	in := bullpen.WikiSaveInput{Slug: slug, Title: old.Title, Body: old.Body, Tags: old.Tags, Summary: summary, BaseRevision: base}
	if err := bullpen.ValidateWikiText(in.Title, in.Body, in.Summary); err != nil {
		return cur, err
	}
	var page bullpen.WikiPage
	_, err = w.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		page, _, err = w.save(tx, actor, in, saveOpts{restoredFrom: number})
		return err
	})
	return w.finish(ctx, page, err)
}

// Revisions lists a page's revisions, newest first, without bodies.
func (w *Wiki) Revisions(ctx context.Context, actor bullpen.Member, slug string) ([]bullpen.WikiRevision, error) {
	p, err := w.page(ctx, actor, slug, true)
	if err != nil {
		return nil, err
	}
	revs, err := w.db.WikiRevisions(ctx, p)
	if err != nil {
		return nil, err
	}
	return revs, w.revisionAuthors(ctx, revs)
}

// Revision returns one revision of a page with its body.
func (w *Wiki) Revision(ctx context.Context, actor bullpen.Member, slug string, number int) (bullpen.WikiRevision, error) {
	p, err := w.page(ctx, actor, slug, true)
	if err != nil {
		return bullpen.WikiRevision{}, err
	}
	rev, err := w.db.WikiRevision(ctx, p, number)
	if err != nil {
		return rev, err
	}
	revs := []bullpen.WikiRevision{rev}
	return revs[0], w.revisionAuthors(ctx, revs)
}

// Backlinks lists the live pages that link to a page.
func (w *Wiki) Backlinks(ctx context.Context, actor bullpen.Member, slug string) ([]bullpen.WikiPageRef, error) {
	p, err := w.page(ctx, actor, slug, true)
	if err != nil {
		return nil, err
	}
	refs, err := w.db.WikiBacklinks(ctx, p)
	if refs == nil {
		refs = []bullpen.WikiPageRef{}
	}
	return refs, err
}

// Wanted lists link targets that no live page answers, most linked first.
func (w *Wiki) Wanted(ctx context.Context, actor bullpen.Member, limit int) ([]bullpen.WikiWanted, error) {
	if err := requireMember(actor); err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = 100
	}
	if limit < 1 || limit > 500 {
		return nil, bullpen.Errorf(bullpen.EINVALID, "limit must be between 1 and 500")
	}
	return w.db.WikiWanted(ctx, limit)
}

// Search finds live pages by the words of a query over title, tags and
// body, best first, with highlighted snippets. Any query text is safe.
func (w *Wiki) Search(ctx context.Context, actor bullpen.Member, o bullpen.WikiSearchOptions) ([]bullpen.WikiSearchHit, error) {
	if err := requireMember(actor); err != nil {
		return nil, err
	}
	if o.Limit == 0 {
		o.Limit = 20
	}
	if o.Limit < 1 || o.Limit > 100 {
		return nil, bullpen.Errorf(bullpen.EINVALID, "limit must be between 1 and 100")
	}
	if len(o.Query) > 1000 {
		return nil, bullpen.Errorf(bullpen.EINVALID, "query is longer than 1000 bytes")
	}
	tag := ""
	if o.Tag != "" {
		tags, err := bullpen.NormalizeWikiTags([]string{o.Tag})
		if err != nil {
			return nil, err
		}
		tag = tags[0]
	}
	return w.db.WikiSearch(ctx, store.WikiSearchQuery{Text: o.Query, Tag: tag, Prefix: o.Prefix, Limit: o.Limit})
}

// Preview renders markdown as a page would show it, without saving.
func (w *Wiki) Preview(ctx context.Context, actor bullpen.Member, body string) (string, error) {
	if err := requireMember(actor); err != nil {
		return "", err
	}
	if err := bullpen.ValidateWikiText("preview", body, ""); err != nil {
		return "", err
	}
	return w.render(ctx, body)
}
