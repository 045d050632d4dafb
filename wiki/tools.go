package wiki

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Tool is an agent tool: a name, a description and a JSON Schema of its
// arguments object, ready to register with a model provider, and the
// function that runs it. Call's result marshals to JSON; its error's
// bullpen.ErrorMessage is written for the model to act on.
type Tool struct {
	Name        string                                                                             `json:"name"`
	Description string                                                                             `json:"description"`
	Parameters  json.RawMessage                                                                    `json:"parameters"`
	Call        func(ctx context.Context, actor bullpen.Member, args json.RawMessage) (any, error) `json:"-"`
}

// Tools returns wiki_list, wiki_read, wiki_search and wiki_write, sorted by
// name so that a prompt built from them is byte-stable.
func (w *Wiki) Tools() []Tool {
	return []Tool{
		{Name: "wiki_list", Description: "List wiki pages (slug, title, tags, revision), by title. Filter by tag; page with offset.",
			Parameters: json.RawMessage(schemaList), Call: func(ctx context.Context, a bullpen.Member, args json.RawMessage) (any, error) {
				return w.ToolList(ctx, a, args)
			}},
		{Name: "wiki_read", Description: "Read a wiki page's markdown by slug or title, with its current revision number (needed to edit it) and backlinks. Give revision to read an older one.",
			Parameters: json.RawMessage(schemaRead), Call: func(ctx context.Context, a bullpen.Member, args json.RawMessage) (any, error) {
				return w.ToolRead(ctx, a, args)
			}},
		{Name: "wiki_search", Description: "Full-text search of the wiki (titles, tags, bodies). Returns the best pages with snippets.",
			Parameters: json.RawMessage(schemaSearch), Call: func(ctx context.Context, a bullpen.Member, args json.RawMessage) (any, error) {
				return w.ToolSearch(ctx, a, args)
			}},
		{Name: "wiki_write", Description: "Create or edit a wiki page (markdown; link pages with [[Page Title]] or [[slug|label]]). To edit, pass base_revision = the revision you read; to create, pass 0. If someone saved in between you get a conflict: re-read, merge, and write again.",
			Parameters: json.RawMessage(schemaWrite), Call: func(ctx context.Context, a bullpen.Member, args json.RawMessage) (any, error) {
				return w.ToolWrite(ctx, a, args)
			}},
	}
}

// Tool argument schemas (JSON Schema, draft 2020-12 subset that model
// providers accept).
const (
	schemaList = `{"type":"object","properties":{` +
		`"tag":{"type":"string","description":"only pages with this tag"},` +
		`"limit":{"type":"integer","minimum":1,"maximum":200,"description":"default 50"},` +
		`"offset":{"type":"integer","minimum":0}},"additionalProperties":false}`
	schemaRead = `{"type":"object","properties":{` +
		`"page":{"type":"string","description":"the page's slug or title"},` +
		`"revision":{"type":"integer","minimum":1,"description":"an older revision to read; default the current one"}},` +
		`"required":["page"],"additionalProperties":false}`
	schemaSearch = `{"type":"object","properties":{` +
		`"query":{"type":"string","description":"words to look for"},` +
		`"tag":{"type":"string","description":"only pages with this tag"},` +
		`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"default 5"}},` +
		`"required":["query"],"additionalProperties":false}`
	schemaWrite = `{"type":"object","properties":{` +
		`"slug":{"type":"string","description":"the page to edit; default: made from the title"},` +
		`"title":{"type":"string"},` +
		`"body":{"type":"string","description":"the whole page in markdown"},` +
		`"tags":{"type":"array","items":{"type":"string"},"description":"omit to keep the page's tags"},` +
		`"summary":{"type":"string","description":"what changed, for the history"},` +
		`"base_revision":{"type":"integer","minimum":0,"description":"the revision you read; 0 to create a page"}},` +
		`"required":["title","body","base_revision"],"additionalProperties":false}`
)

// ListArgs are wiki_list's arguments.
type ListArgs struct {
	Tag    string `json:"tag"`
	Limit  int    `json:"limit"`
	Offset int    `json:"offset"`
}

// ToolPageRef is a page in tool results.
type ToolPageRef struct {
	Slug      string    `json:"slug"`
	Title     string    `json:"title"`
	Tags      []string  `json:"tags"`
	Revision  int       `json:"revision"`
	UpdatedAt time.Time `json:"updated_at"`
	UpdatedBy string    `json:"updated_by"`
}

// ListResult is wiki_list's result.
type ListResult struct {
	Pages []ToolPageRef `json:"pages"`
	More  bool          `json:"more"`
}

// ToolList runs wiki_list.
func (w *Wiki) ToolList(ctx context.Context, actor bullpen.Member, args json.RawMessage) (ListResult, error) {
	var a ListArgs
	if err := toolArgs(args, &a); err != nil {
		return ListResult{}, err
	}
	if a.Limit == 0 {
		a.Limit = 50
	}
	if a.Limit > 200 {
		a.Limit = 200
	}
	pages, err := w.List(ctx, actor, ListOptions{Tag: a.Tag, Limit: a.Limit + 1, Offset: a.Offset})
	if err != nil {
		return ListResult{}, toolError(err)
	}
	res := ListResult{Pages: []ToolPageRef{}, More: len(pages) > a.Limit}
	for i, p := range pages {
		if i == a.Limit {
			break
		}
		res.Pages = append(res.Pages, ToolPageRef{Slug: p.Slug, Title: p.Title, Tags: p.Tags, Revision: p.Revision,
			UpdatedAt: p.UpdatedAt, UpdatedBy: p.UpdatedByHandle})
	}
	return res, nil
}

// ReadArgs are wiki_read's arguments.
type ReadArgs struct {
	Page     string `json:"page"`
	Revision int    `json:"revision"`
}

// ReadResult is wiki_read's result. Revision is the revision read;
// CurrentRevision is the one a write must name as its base.
type ReadResult struct {
	Slug            string    `json:"slug"`
	Title           string    `json:"title"`
	Tags            []string  `json:"tags"`
	Revision        int       `json:"revision"`
	CurrentRevision int       `json:"current_revision"`
	Body            string    `json:"body"`
	UpdatedAt       time.Time `json:"updated_at"`
	UpdatedBy       string    `json:"updated_by"`
	Backlinks       []string  `json:"backlinks"`
}

// ToolRead runs wiki_read. The page is found by slug, else by title.
func (w *Wiki) ToolRead(ctx context.Context, actor bullpen.Member, args json.RawMessage) (ReadResult, error) {
	var a ReadArgs
	if err := toolArgs(args, &a); err != nil {
		return ReadResult{}, err
	}
	slug := bullpen.WikiSlugify(a.Page)
	if slug == "" {
		return ReadResult{}, toolErrorf(bullpen.EINVALID, "invalid arguments: page must be a page's slug or title")
	}
	if found, err := w.db.WikiResolve(ctx, []string{slug}); err == nil && found[slug].Slug != "" {
		slug = found[slug].Slug
	}
	p, err := w.page(ctx, actor, slug, false)
	if err != nil {
		return ReadResult{}, toolError(err)
	}
	pages := []bullpen.WikiPage{p}
	if err := w.authors(ctx, pages); err != nil {
		return ReadResult{}, toolError(err)
	}
	p = pages[0]
	res := ReadResult{Slug: p.Slug, Title: p.Title, Tags: p.Tags, Revision: p.Revision, CurrentRevision: p.Revision,
		Body: p.Body, UpdatedAt: p.UpdatedAt, UpdatedBy: p.UpdatedByHandle, Backlinks: []string{}}
	if a.Revision != 0 && a.Revision != p.Revision {
		rev, err := w.Revision(ctx, actor, p.Slug, a.Revision)
		if err != nil {
			return ReadResult{}, toolError(err)
		}
		res.Title, res.Tags, res.Revision, res.Body = rev.Title, rev.Tags, rev.Number, rev.Body
		res.UpdatedAt, res.UpdatedBy = rev.CreatedAt, rev.AuthorHandle
	}
	refs, err := w.db.WikiBacklinks(ctx, p)
	if err != nil {
		return ReadResult{}, toolError(err)
	}
	for _, r := range refs {
		res.Backlinks = append(res.Backlinks, r.Slug)
	}
	return res, nil
}

// SearchArgs are wiki_search's arguments.
type SearchArgs struct {
	Query string `json:"query"`
	Tag   string `json:"tag"`
	Limit int    `json:"limit"`
}

// SearchHit is one wiki_search result.
type SearchHit struct {
	Slug     string   `json:"slug"`
	Title    string   `json:"title"`
	Tags     []string `json:"tags"`
	Revision int      `json:"revision"`
	Snippet  string   `json:"snippet"`
}

// SearchResult is wiki_search's result.
type SearchResult struct {
	Hits []SearchHit `json:"hits"`
}

// ToolSearch runs wiki_search.
func (w *Wiki) ToolSearch(ctx context.Context, actor bullpen.Member, args json.RawMessage) (SearchResult, error) {
	var a SearchArgs
	if err := toolArgs(args, &a); err != nil {
		return SearchResult{}, err
	}
	if a.Limit == 0 {
		a.Limit = 5
	}
	a.Limit = min(max(a.Limit, 1), 20)
	hits, err := w.Search(ctx, actor, SearchOptions{Query: a.Query, Tag: a.Tag, Limit: a.Limit})
	if err != nil {
		return SearchResult{}, toolError(err)
	}
	res := SearchResult{Hits: []SearchHit{}}
	for _, h := range hits {
		res.Hits = append(res.Hits, SearchHit{Slug: h.Slug, Title: h.Title, Tags: h.Tags, Revision: h.Revision, Snippet: h.Snippet})
	}
	return res, nil
}

// WriteArgs are wiki_write's arguments; base_revision is required.
type WriteArgs struct {
	Slug         string   `json:"slug"`
	Title        string   `json:"title"`
	Body         string   `json:"body"`
	Tags         []string `json:"tags"`
	Summary      string   `json:"summary"`
	BaseRevision *int     `json:"base_revision"`
}

// WriteResult is wiki_write's result. Unchanged is true when the page
// already had this content (no new revision).
type WriteResult struct {
	Slug      string `json:"slug"`
	Title     string `json:"title"`
	Revision  int    `json:"revision"`
	Created   bool   `json:"created"`
	Unchanged bool   `json:"unchanged"`
}

// ToolWrite runs wiki_write by actor. A stale base_revision fails with a
// message naming the current revision ("conflict: page "x" changed since
// revision 3; current revision is 4; re-read and merge").
func (w *Wiki) ToolWrite(ctx context.Context, actor bullpen.Member, args json.RawMessage) (WriteResult, error) {
	return w.ToolWriteWith(ctx, actor, args, nil)
}

// ToolWriteWith is ToolWrite that runs fn in the save's transaction (see
// SaveWith).
func (w *Wiki) ToolWriteWith(ctx context.Context, actor bullpen.Member, args json.RawMessage, fn func(tx *store.Tx, p bullpen.WikiPage) error) (WriteResult, error) {
	var a WriteArgs
	if err := toolArgs(args, &a); err != nil {
		return WriteResult{}, err
	}
	if a.BaseRevision == nil {
		return WriteResult{}, toolErrorf(bullpen.EINVALID, "invalid arguments: base_revision is required: the revision you read with wiki_read, or 0 to create a page")
	}
	p, err := w.SaveWith(ctx, actor, SaveInput{Slug: a.Slug, Title: a.Title, Body: a.Body, Tags: a.Tags, Summary: a.Summary, BaseRevision: *a.BaseRevision}, fn)
	if err != nil {
		return WriteResult{}, toolError(err)
	}
	return WriteResult{Slug: p.Slug, Title: p.Title, Revision: p.Revision, Created: *a.BaseRevision == 0,
		Unchanged: *a.BaseRevision != 0 && p.Revision == *a.BaseRevision}, nil
}

// toolArgs decodes a tool's arguments strictly; empty arguments are {}.
func toolArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return toolErrorf(bullpen.EINVALID, "invalid arguments: %v", err)
	}
	return nil
}

func toolErrorf(code, format string, args ...any) error {
	return bullpen.Errorf(code, format, args...)
}

// toolError rewrites an error's message so that a model knows what to do
// next. Conflicts keep their *ConflictError (with the current page).
func toolError(err error) error {
	var ce *ConflictError
	if errors.As(err, &ce) {
		return err
	}
	code, msg := bullpen.ErrorCode(err), bullpen.ErrorMessage(err)
	switch code {
	case bullpen.ENOTFOUND:
		msg = fmt.Sprintf("not found: %s; use wiki_search or wiki_list to find pages, or wiki_write with base_revision 0 to create one", msg)
	case bullpen.EINVALID, bullpen.ETOOLARGE:
		msg = "invalid arguments: " + msg
	case bullpen.EINTERNAL:
		msg = "the wiki failed; try again later"
	}
	return &bullpen.Error{Code: code, Message: msg, Err: err}
}
