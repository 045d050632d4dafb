package wiki_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/wiki"
)

// The wiki is what the agents runtime asks for, with no adapter between.
var (
	_ agents.Wiki   = (*wiki.Wiki)(nil)
	_ agents.WikiTx = (*wiki.Wiki)(nil)
)

func TestAgentMethodsRoundTrip(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		p, err := f.w.WritePage(f.ctx, f.agent, "Agent Notes", "Remember [[Deploy Guide]].", 0)
		if err != nil || p.Slug != "agent-notes" || p.Revision != 1 {
			t.Fatalf("WritePage(create) = %+v, %v", p, err)
		}
		p, err = f.w.ReadPage(f.ctx, f.agent, "Agent Notes")
		if err != nil || p.Slug != "agent-notes" || p.Revision != 1 || p.Body != "Remember [[Deploy Guide]]." || p.UpdatedByHandle != "scribe" {
			t.Errorf("ReadPage(title) = %+v, %v", p, err)
		}
		if _, err := f.w.WritePage(f.ctx, f.agent, "Agent Notes", "v2", 1); err != nil {
			t.Fatal(err)
		}
		// A stale write tells the agent what to do.
		_, err = f.w.WritePage(f.ctx, f.agent, "Agent Notes", "v2 again", 1)
		var ce *bullpen.WikiConflictError
		if !errors.As(err, &ce) || bullpen.ErrorMessage(err) != `conflict: page "agent-notes" changed since revision 1; current revision is 2; re-read and merge` {
			t.Errorf("stale write: %v", err)
		}
		if p, err := f.w.ReadPage(f.ctx, f.agent, "agent-notes"); err != nil || p.Revision != 2 || p.Body != "v2" {
			t.Errorf("ReadPage(slug) after the refused write = %+v, %v; want revision 2, v2", p, err)
		}
		hits, err := f.w.SearchPages(f.ctx, f.agent, "v2", 5)
		if err != nil || len(hits) != 1 || hits[0].Slug != "agent-notes" || hits[0].Title != "Agent Notes" {
			t.Errorf("SearchPages = %+v, %v", hits, err)
		}
		for _, tt := range []struct {
			name, code, msg string
			err             error
		}{
			{"write on a missing page", bullpen.ENOTFOUND, "base_revision 0 to create", write(f, "Nope", 4)},
			{"write without a title", bullpen.EINVALID, "invalid arguments", write(f, "", 0)},
			{"read a missing page", bullpen.ENOTFOUND, "wiki_search", read(f, "missing page")},
			{"read no title", bullpen.EINVALID, "invalid arguments", read(f, "!!")},
		} {
			wantCode(t, tt.name, tt.err, tt.code)
			if !strings.Contains(bullpen.ErrorMessage(tt.err), tt.msg) {
				t.Errorf("%s: message %q lacks %q", tt.name, bullpen.ErrorMessage(tt.err), tt.msg)
			}
		}
	})
}

func write(f *fixture, title string, base int) error {
	_, err := f.w.WritePage(f.ctx, f.agent, title, "y", base)
	return err
}

func read(f *fixture, page string) error {
	_, err := f.w.ReadPage(f.ctx, f.agent, page)
	return err
}

// WritePageWith's fn runs in the save's transaction: its rows commit with
// the revision, and its error undoes the save.
func TestWritePageWithSharesTheTransaction(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		boom := errors.New("record failed")
		_, err := f.w.WritePageWith(f.ctx, f.agent, "Plan", "v1", 0, func(tx *store.Tx, p bullpen.WikiPage) error {
			if p.Slug != "plan" || p.Revision != 1 {
				t.Errorf("fn saw %+v", p)
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Errorf("WritePageWith = %v, want fn's error", err)
		}
		if _, err := f.w.ReadPage(f.ctx, f.agent, "Plan"); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Errorf("after fn failed, ReadPage = %v, want not found (the save rolled back)", err)
		}
		ran := false
		p, err := f.w.WritePageWith(f.ctx, f.agent, "Plan", "v1", 0, func(tx *store.Tx, p bullpen.WikiPage) error { ran = true; return nil })
		if err != nil || !ran || p.Revision != 1 {
			t.Errorf("WritePageWith = %+v, %v (fn ran %v)", p, err, ran)
		}
	})
}
