// Package wiki is Bullpen's shared knowledge: markdown pages with a full
// revision history and attribution (people and agents), line diffs and
// restore, [[links]] with backlinks and wanted pages, full-text search
// (SQLite FTS5 or PostgreSQL tsvector), sanitized rendering, tar/zip
// export and import, and the typed methods agents read and write it by.
//
// # Concurrency
//
// Every save names the revision it edits (bullpen.WikiSaveInput.BaseRevision; 0
// creates a page). A save on a stale base, or a create on a taken slug,
// changes nothing and fails with a *bullpen.WikiConflictError that holds the current
// page; bullpen.ErrorCode reports ECONFLICT. The check and the write run in
// one store transaction, and store.DB.Transact serializes writers (in process
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
// # Agents
//
// Agents use the wiki through four typed methods, which satisfy
// agents.Wiki and agents.WikiTx, so that main passes a *Wiki to the agents
// runtime as it is:
//
//	func (w *Wiki) SearchPages(ctx, actor, query string, limit int) ([]bullpen.WikiSearchHit, error)
//	func (w *Wiki) ReadPage(ctx, actor, page string) (bullpen.WikiPage, error)   // by slug, else title
//	func (w *Wiki) WritePage(ctx, actor, title, body string, baseRevision int) (bullpen.WikiPage, error)
//	func (w *Wiki) WritePageWith(ctx, actor, title, body string, baseRevision int,
//		fn func(tx *store.Tx, p bullpen.WikiPage) error) (bullpen.WikiPage, error)
//
// The tools a model is offered (wiki_search, wiki_read, wiki_write: names,
// descriptions, schemas) are entries of the one tool registry in package
// agents, which serves the built-in runtime and, next, the MCP endpoint;
// this package declares no tools of its own. The actor is the member the
// caller authenticated; it becomes the author of the revision.
// WritePageWith runs fn in the save's transaction, so an agent's record of
// the write commits with it and a resumed turn never writes twice.
//
// Errors are *bullpen.Error (or *bullpen.WikiConflictError) whose
// bullpen.ErrorMessage is written for the model to act on, e.g.
//
//	conflict: page "plan" changed since revision 3; current revision is 4; re-read and merge
//	not found: wiki page "x" not found; use wiki_search to find pages, or wiki_write with base_revision 0 to create one
//	invalid arguments: page must be a page's slug or title
//
// Codes: EINVALID and ETOOLARGE (bad arguments), ENOTFOUND, ECONFLICT,
// EINTERNAL ("the wiki failed; try again later").
package wiki
