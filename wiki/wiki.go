package wiki

import (
	"context"
	"fmt"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/render"
	"github.com/bullpen-hq/bullpen/store"
)

// Wiki serves the wiki's operations. Callers pass the acting member, which
// the web layer derives from a credential, never from a request body.
type Wiki struct {
	db *store.DB
	md *render.Renderer // the dashboard's markdown, with the wiki's links
}

// Config configures a Wiki. It is empty for now and keeps the constructor
// stable.
type Config struct{}

// New returns a Wiki on an open store.
func New(db *store.DB, _ Config) *Wiki {
	return &Wiki{db: db, md: newRenderer()}
}

func newConflict(base int, cur bullpen.WikiPage) *bullpen.WikiConflictError {
	var msg string
	switch {
	case cur.Deleted:
		msg = fmt.Sprintf("conflict: page %q is deleted (revision %d); undelete it first", cur.Slug, cur.Revision)
	case base == 0:
		msg = fmt.Sprintf("conflict: page %q already exists at revision %d; read it and save with base_revision %d", cur.Slug, cur.Revision, cur.Revision)
	default:
		msg = fmt.Sprintf("conflict: page %q changed since revision %d; current revision is %d; re-read and merge", cur.Slug, base, cur.Revision)
	}
	return &bullpen.WikiConflictError{Base: base, Current: cur, Reason: msg}
}

// authors fills the handles of pages' authors.
func (w *Wiki) authors(ctx context.Context, pages []bullpen.WikiPage) error {
	ids := make([]int64, 0, 2*len(pages))
	for _, p := range pages {
		ids = append(ids, p.CreatedBy, p.UpdatedBy)
	}
	byID, err := w.db.MembersByID(ctx, ids)
	if err != nil {
		return err
	}
	for i := range pages {
		pages[i].CreatedByHandle = byID[pages[i].CreatedBy].Handle
		pages[i].UpdatedByHandle = byID[pages[i].UpdatedBy].Handle
	}
	return nil
}

func (w *Wiki) revisionAuthors(ctx context.Context, revs []bullpen.WikiRevision) error {
	ids := make([]int64, len(revs))
	for i, r := range revs {
		ids[i] = r.AuthorID
	}
	byID, err := w.db.MembersByID(ctx, ids)
	if err != nil {
		return err
	}
	for i := range revs {
		revs[i].AuthorHandle = byID[revs[i].AuthorID].Handle
	}
	return nil
}

// requireMember refuses requests without an acting member.
func requireMember(actor bullpen.Member) error {
	if actor.ID == 0 {
		return bullpen.Errorf(bullpen.EUNAUTHORIZED, "wiki: no acting member")
	}
	return nil
}
