// Package wiki is Bullpen's shared knowledge: markdown pages with a full
// revision history and attribution (people and agents), line diffs and
// restore, [[links]] with backlinks and wanted pages, full-text search
// (SQLite FTS5 or PostgreSQL tsvector), sanitized rendering, tar/zip
// export and import, and the tools agents use to read and write it.
//
// # Concurrency
//
// Every save names the revision it edits (SaveInput.BaseRevision; 0
// creates a page). A save on a stale base, or a create on a taken slug,
// changes nothing and fails with a *ConflictError that holds the current
// page; bullpen.ErrorCode reports ECONFLICT. The check and the write run in
// one store transaction, and store.DB.Write serializes writers (in process
// by a mutex, across replicas by a PostgreSQL advisory lock), so of two
// racing writers on one base exactly one wins.
//
// # Events
//
// Saves (including creates, restores and imports) emit
// bullpen.EventWikiPageSaved ("wiki.page_saved"); Delete and Undelete emit
// "wiki.page_deleted" and "wiki.page_undeleted". Each payload is a
// bullpen.WikiEvent: slug, title, revision, author (handle), author_id,
// and summary, restored_from and created where they apply. Events are
// stored in the same transaction as the change.
//
// # Links
//
// [[Page Title]] and [[slug|label]] link to the live page whose slug is
// the slugified target, else to the oldest live page whose slugified title
// is the target. Links to missing pages render with the class
// "wiki-missing" and are listed by Wanted. Links in code do not count.
//
// # Agent tools
//
// Tools returns four tools, sorted by name, each a Tool with Name,
// Description, Parameters (a JSON Schema object, additionalProperties
// false) and Call:
//
//	func (w *Wiki) Tools() []Tool
//
//	type Tool struct {
//		Name        string
//		Description string
//		Parameters  json.RawMessage
//		Call        func(ctx context.Context, actor bullpen.Member, args json.RawMessage) (any, error)
//	}
//
// Call runs the typed method of the same tool:
//
//	func (w *Wiki) ToolList(ctx context.Context, actor bullpen.Member, args json.RawMessage) (ListResult, error)
//	func (w *Wiki) ToolRead(ctx context.Context, actor bullpen.Member, args json.RawMessage) (ReadResult, error)
//	func (w *Wiki) ToolSearch(ctx context.Context, actor bullpen.Member, args json.RawMessage) (SearchResult, error)
//	func (w *Wiki) ToolWrite(ctx context.Context, actor bullpen.Member, args json.RawMessage) (WriteResult, error)
//
// Arguments (empty or null means {}; unknown fields are an error):
//
//	wiki_list   {"tag"?: string, "limit"?: 1-200 (50), "offset"?: int}
//	            -> {"pages": [{slug, title, tags, revision, updated_at, updated_by}], "more": bool}
//	wiki_read   {"page": slug or title, "revision"?: int}
//	            -> {slug, title, tags, revision, current_revision, body, updated_at, updated_by, backlinks: [slug]}
//	wiki_search {"query": string, "tag"?: string, "limit"?: 1-20 (5)}
//	            -> {"hits": [{slug, title, tags, revision, snippet}]}
//	wiki_write  {"slug"?: string, "title": string, "body": markdown, "tags"?: [string],
//	             "summary"?: string, "base_revision": int (0 creates)}
//	            -> {slug, title, revision, created, unchanged}
//
// The actor is the member the agent runtime authenticated; it becomes the
// author of the revision. Errors are *bullpen.Error (or *ConflictError)
// whose bullpen.ErrorMessage is written for the model to act on, e.g.
//
//	conflict: page "plan" changed since revision 3; current revision is 4; re-read and merge
//	not found: wiki page "x" not found; use wiki_search or wiki_list to find pages, or wiki_write with base_revision 0 to create one
//	invalid arguments: base_revision is required: the revision you read with wiki_read, or 0 to create a page
//
// Codes: EINVALID and ETOOLARGE (bad arguments), ENOTFOUND, ECONFLICT,
// EINTERNAL ("the wiki failed; try again later").
package wiki
