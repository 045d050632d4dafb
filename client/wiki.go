package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/bullpen-hq/bullpen"
)

// WikiPage returns a page's current revision by slug or title.
func (c *Client) WikiPage(ctx context.Context, slug string) (bullpen.WikiPage, error) {
	return get[bullpen.WikiPage](ctx, c, p("/wiki/pages/%v", slug), nil)
}

// WikiPages lists pages by title (or by last update when byUpdate is set).
func (c *Client) WikiPages(ctx context.Context, byUpdate bool, limit, offset int) ([]bullpen.WikiPage, error) {
	q := url.Values{}
	if byUpdate {
		q.Set("sort", "updated")
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if offset > 0 {
		q.Set("offset", strconv.Itoa(offset))
	}
	return list[bullpen.WikiPage](ctx, c, "/wiki/pages", q)
}

// CreateWikiPage creates a page; its slug comes from the title when empty.
func (c *Client) CreateWikiPage(ctx context.Context, in bullpen.WikiSaveInput) (bullpen.WikiPage, error) {
	body := map[string]any{"slug": in.Slug, "title": in.Title, "body": in.Body, "tags": in.Tags, "summary": in.Summary}
	return send[bullpen.WikiPage](ctx, c, http.MethodPost, "/wiki/pages", body)
}

// SaveWikiPage saves a new revision of the page at slug. base names the
// revision the edit started from (0 creates the page); when someone saved
// since, the answer is a conflict (see IsConflict) and nothing changes.
// Tags nil keeps the page's tags.
func (c *Client) SaveWikiPage(ctx context.Context, slug, title, body string, tags []string, summary string, base int) (bullpen.WikiPage, error) {
	in := map[string]any{"title": title, "body": body, "summary": summary, "base_revision": base}
	if tags != nil {
		in["tags"] = tags
	}
	return send[bullpen.WikiPage](ctx, c, http.MethodPut, p("/wiki/pages/%v", slug), in)
}

// IsConflict reports whether err is a stale-revision conflict.
func IsConflict(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusConflict
}

// DeleteWikiPage deletes a page (it can be undeleted).
func (c *Client) DeleteWikiPage(ctx context.Context, slug string) (bullpen.WikiPage, error) {
	return send[bullpen.WikiPage](ctx, c, http.MethodDelete, p("/wiki/pages/%v", slug), nil)
}

// WikiRevisions lists a page's revisions, newest first.
func (c *Client) WikiRevisions(ctx context.Context, slug string) ([]bullpen.WikiRevision, error) {
	return list[bullpen.WikiRevision](ctx, c, p("/wiki/pages/%v/revisions", slug), nil)
}

// WikiDiff returns the diff between two revisions of a page.
func (c *Client) WikiDiff(ctx context.Context, slug string, from, to int) (bullpen.WikiDiff, error) {
	q := url.Values{"from": {strconv.Itoa(from)}, "to": {strconv.Itoa(to)}}
	return get[bullpen.WikiDiff](ctx, c, p("/wiki/pages/%v/diff", slug), q)
}

// SearchWiki runs a full-text search, best hits first.
func (c *Client) SearchWiki(ctx context.Context, query string, limit int) ([]bullpen.WikiSearchHit, error) {
	q := url.Values{"q": {query}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return list[bullpen.WikiSearchHit](ctx, c, "/wiki/search", q)
}
