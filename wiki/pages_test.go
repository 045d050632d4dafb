package wiki_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"github.com/bullpen-hq/bullpen/wiki"
)

func TestSaveRevisionsAndEvents(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		p := f.save(f.ada, bullpen.WikiSaveInput{Title: "Release Process", Body: "# Steps\n\n1. tag\n", Tags: []string{"Ops", "release", "ops"}, Summary: "first"})
		if p.Slug != "release-process" || p.Revision != 1 || p.CreatedBy != f.ada.ID || p.CreatedByHandle != "ada" {
			t.Fatalf("created = %+v", p)
		}
		if fmt.Sprint(p.Tags) != "[ops release]" {
			t.Errorf("tags = %v, want [ops release]", p.Tags)
		}
		p2 := f.save(f.agent, bullpen.WikiSaveInput{Slug: p.Slug, Title: "Release Process", Body: "# Steps\n\n1. tag\n2. push\n", Tags: p.Tags, Summary: "add push", BaseRevision: 1})
		if p2.Revision != 2 || p2.UpdatedBy != f.agent.ID || p2.UpdatedByHandle != "scribe" || p2.CreatedByHandle != "ada" {
			t.Fatalf("updated = %+v", p2)
		}
		// Saving the same content makes no revision.
		same := f.save(f.agent, bullpen.WikiSaveInput{Slug: p.Slug, Title: "Release Process", Body: p2.Body, Tags: []string{"release", "ops"}, BaseRevision: 2})
		if same.Revision != 2 {
			t.Errorf("no-op save made revision %d, want 2", same.Revision)
		}
		revs, err := f.w.Revisions(f.ctx, f.ada, p.Slug)
		if err != nil {
			t.Fatal(err)
		}
		if len(revs) != 2 || revs[0].Number != 2 || revs[0].Summary != "add push" || revs[0].AuthorHandle != "scribe" || revs[0].Body != "" {
			t.Fatalf("revisions = %+v", revs)
		}
		r1, err := f.w.Revision(f.ctx, f.ada, p.Slug, 1)
		if err != nil || r1.Body != "# Steps\n\n1. tag\n" || r1.AuthorHandle != "ada" || r1.Summary != "first" {
			t.Fatalf("revision 1 = %+v, %v", r1, err)
		}
		_, err = f.w.Revision(f.ctx, f.ada, p.Slug, 9)
		wantCode(t, "revision 9", err, bullpen.ENOTFOUND)

		got, err := f.w.Page(f.ctx, f.ada, p.Slug, false)
		if err != nil || got.Revision != 2 || !strings.Contains(got.HTML, "<h1>Steps</h1>") {
			t.Fatalf("Page = %+v, %v", got, err)
		}
		evs := f.events(bullpen.EventWikiPageSaved)
		if len(evs) != 2 || evs[0].Slug != p.Slug || !evs[0].Created || evs[1].Revision != 2 || evs[1].Author != "scribe" || evs[1].Summary != "add push" {
			t.Errorf("saved events = %+v", evs)
		}
		list, err := f.w.List(f.ctx, f.ada, bullpen.WikiListOptions{Tag: "OPS"})
		if err != nil || len(list) != 1 || list[0].Body != "" || list[0].Slug != p.Slug {
			t.Errorf("List(tag ops) = %+v, %v", list, err)
		}
		tags, err := f.w.Tags(f.ctx, f.ada)
		if err != nil || len(tags) != 2 || tags[0].Tag != "ops" || tags[0].Count != 1 {
			t.Errorf("Tags = %+v, %v", tags, err)
		}
	})
}

func TestSaveValidation(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		tests := []struct {
			name string
			in   bullpen.WikiSaveInput
			code string
		}{
			{"no title", bullpen.WikiSaveInput{Body: "x"}, bullpen.EINVALID},
			{"punctuation title", bullpen.WikiSaveInput{Title: "!!!", Body: "x"}, bullpen.EINVALID},
			{"bad slug", bullpen.WikiSaveInput{Slug: "Bad Slug", Title: "T", Body: "x"}, bullpen.EINVALID},
			{"control in title", bullpen.WikiSaveInput{Title: "a\x00b", Body: "x"}, bullpen.EINVALID},
			{"control in body", bullpen.WikiSaveInput{Title: "T", Body: "a\x02b"}, bullpen.EINVALID},
			{"bad tag", bullpen.WikiSaveInput{Title: "T", Body: "x", Tags: []string{"a b"}}, bullpen.EINVALID},
			{"negative base", bullpen.WikiSaveInput{Title: "T", Body: "x", BaseRevision: -1}, bullpen.EINVALID},
			{"huge body", bullpen.WikiSaveInput{Title: "T", Body: strings.Repeat("x", bullpen.MaxWikiBody+1)}, bullpen.ETOOLARGE},
			{"edit missing page", bullpen.WikiSaveInput{Title: "Nope", Body: "x", BaseRevision: 3}, bullpen.ENOTFOUND},
		}
		for _, tt := range tests {
			_, err := f.w.Save(f.ctx, f.ada, tt.in)
			wantCode(t, tt.name, err, tt.code)
		}
		_, err := f.w.Save(f.ctx, bullpen.Member{}, bullpen.WikiSaveInput{Title: "T", Body: "x"})
		wantCode(t, "no actor", err, bullpen.EUNAUTHORIZED)
		if n := len(f.events(bullpen.EventWikiPageSaved)); n != 0 {
			t.Errorf("%d events after failed saves, want 0", n)
		}
	})
}

func TestConflictKeepsCurrent(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		f.save(f.ada, bullpen.WikiSaveInput{Title: "Plan", Body: "v1"})
		f.save(f.agent, bullpen.WikiSaveInput{Slug: "plan", Title: "Plan", Body: "v2 by agent", BaseRevision: 1})
		_, err := f.w.Save(f.ctx, f.ada, bullpen.WikiSaveInput{Slug: "plan", Title: "Plan", Body: "v2 by ada", BaseRevision: 1})
		var ce *bullpen.WikiConflictError
		if !errors.As(err, &ce) || !bullpen.IsCode(err, bullpen.ECONFLICT) {
			t.Fatalf("stale save: %v, want a *ConflictError", err)
		}
		if ce.Current.Body != "v2 by agent" || ce.Current.Revision != 2 || ce.Current.UpdatedByHandle != "scribe" {
			t.Errorf("conflict current = %+v", ce.Current)
		}
		if msg := bullpen.ErrorMessage(err); msg != `conflict: page "plan" changed since revision 1; current revision is 2; re-read and merge` {
			t.Errorf("message = %q", msg)
		}
		// Creating a page that exists is a conflict too.
		_, err = f.w.Save(f.ctx, f.ada, bullpen.WikiSaveInput{Title: "Plan", Body: "new"})
		if !errors.As(err, &ce) || ce.Current.Revision != 2 {
			t.Errorf("create existing: %v", err)
		}
		// Re-saving on the new base works.
		p := f.save(f.ada, bullpen.WikiSaveInput{Slug: "plan", Title: "Plan", Body: "merged", BaseRevision: 2})
		if p.Revision != 3 {
			t.Errorf("merged revision = %d, want 3", p.Revision)
		}
	})
}

// Two writers on two separate connections pools (like two replicas) race
// to save on the same base, many times: each time exactly one wins and
// the other gets a conflict naming the winner's revision.
func TestRacingWritersExactlyOneWins(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		f := newFixture(t, cfg)
		db2, err := store.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db2.Close()
		writers := []*wiki.Wiki{f.w, wiki.New(db2, wiki.Config{})}
		f.save(f.ada, bullpen.WikiSaveInput{Title: "Hot", Body: "start"})
		const rounds = 15
		for round := 1; round <= rounds; round++ {
			var wg sync.WaitGroup
			errs := make([]error, len(writers))
			start := make(chan struct{})
			for i, w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, errs[i] = w.Save(context.Background(), f.ada, bullpen.WikiSaveInput{Slug: "hot", Title: "Hot",
						Body: fmt.Sprintf("round %d writer %d", round, i), BaseRevision: round})
				}()
			}
			close(start)
			wg.Wait()
			wins, conflicts := 0, 0
			for _, err := range errs {
				var ce *bullpen.WikiConflictError
				switch {
				case err == nil:
					wins++
				case errors.As(err, &ce) && ce.Current.Revision == round+1:
					conflicts++
				default:
					t.Fatalf("round %d: unexpected error %v", round, err)
				}
			}
			if wins != 1 || conflicts != 1 {
				t.Fatalf("round %d: %d wins and %d conflicts, want 1 and 1", round, wins, conflicts)
			}
		}
		revs, err := f.w.Revisions(f.ctx, f.ada, "hot")
		if err != nil || len(revs) != rounds+1 {
			t.Fatalf("%d revisions (%v), want %d", len(revs), err, rounds+1)
		}
		if n := len(f.events(bullpen.EventWikiPageSaved)); n != rounds+1 {
			t.Errorf("%d saved events, want %d", n, rounds+1)
		}
	})
}

// Many goroutines create the same page at once: one creates it.
func TestRacingCreates(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := f.w.Save(f.ctx, f.ada, bullpen.WikiSaveInput{Title: "Fresh", Body: fmt.Sprint(i)})
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					wins++
				} else if !bullpen.IsCode(err, bullpen.ECONFLICT) {
					t.Errorf("create %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 {
			t.Errorf("%d creates won, want 1", wins)
		}
	})
}

func TestDeleteUndeleteRestore(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		f.save(f.ada, bullpen.WikiSaveInput{Title: "Doc", Body: "one", Tags: []string{"a"}})
		f.save(f.ada, bullpen.WikiSaveInput{Slug: "doc", Title: "Doc v2", Body: "two", BaseRevision: 1})
		if _, err := f.w.Delete(f.ctx, f.agent, "doc"); err != nil {
			t.Fatal(err)
		}
		_, err := f.w.Page(f.ctx, f.ada, "doc", false)
		wantCode(t, "read deleted", err, bullpen.ENOTFOUND)
		p, err := f.w.Page(f.ctx, f.ada, "doc", true)
		if err != nil || !p.Deleted {
			t.Errorf("read deleted with includeDeleted = %+v, %v", p, err)
		}
		_, err = f.w.Save(f.ctx, f.ada, bullpen.WikiSaveInput{Slug: "doc", Title: "Doc", Body: "three", BaseRevision: 2})
		wantCode(t, "save deleted", err, bullpen.ECONFLICT)
		_, err = f.w.Delete(f.ctx, f.agent, "doc")
		wantCode(t, "delete twice", err, bullpen.ENOTFOUND)
		if list, _ := f.w.List(f.ctx, f.ada, bullpen.WikiListOptions{}); len(list) != 0 {
			t.Errorf("live list has %d pages, want 0", len(list))
		}
		if list, _ := f.w.List(f.ctx, f.ada, bullpen.WikiListOptions{Deleted: true}); len(list) != 1 {
			t.Errorf("deleted list has %d pages, want 1", len(list))
		}
		if _, err := f.w.Undelete(f.ctx, f.ada, "doc"); err != nil {
			t.Fatal(err)
		}
		_, err = f.w.Undelete(f.ctx, f.ada, "doc")
		wantCode(t, "undelete live", err, bullpen.ECONFLICT)

		p, err = f.w.Restore(f.ctx, f.ada, "doc", 1, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		if p.Revision != 3 || p.Body != "one" || p.Title != "Doc" || fmt.Sprint(p.Tags) != "[a]" {
			t.Errorf("restored = %+v", p)
		}
		r3, _ := f.w.Revision(f.ctx, f.ada, "doc", 3)
		if r3.RestoredFrom != 1 || r3.Summary != "Restored revision 1" {
			t.Errorf("revision 3 = %+v", r3)
		}
		_, err = f.w.Restore(f.ctx, f.ada, "doc", 2, 2, "")
		wantCode(t, "restore on stale base", err, bullpen.ECONFLICT)
		_, err = f.w.Restore(f.ctx, f.ada, "doc", 7, 0, "")
		wantCode(t, "restore missing revision", err, bullpen.ENOTFOUND)

		if n := len(f.events(bullpen.EventWikiPageDeleted)); n != 1 {
			t.Errorf("%d deleted events, want 1", n)
		}
		if n := len(f.events(bullpen.EventWikiPageUndeleted)); n != 1 {
			t.Errorf("%d undeleted events, want 1", n)
		}
		saved := f.events(bullpen.EventWikiPageSaved)
		if last := saved[len(saved)-1]; last.RestoredFrom != 1 || last.Revision != 3 {
			t.Errorf("restore event = %+v", last)
		}
	})
}

func TestDiffRevisions(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		f.save(f.ada, bullpen.WikiSaveInput{Title: "D", Body: "a\nb\nc\n"})
		f.save(f.ada, bullpen.WikiSaveInput{Slug: "d", Title: "D2", Body: "a\nB\nc\nd\n", BaseRevision: 1})
		d, err := f.w.Diff(f.ctx, f.ada, "d", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range d.Lines {
			got = append(got, l.Op[:1]+l.Text)
		}
		if want := "[ea db iB ec id]"; fmt.Sprint(got) != want || d.From != 1 || d.To != 2 || d.Added != 2 || d.Removed != 1 || d.ToTitle != "D2" {
			t.Errorf("diff = %v %+v, want %s", got, d, want)
		}
		_, err = f.w.Diff(f.ctx, f.ada, "d", 1, 5)
		wantCode(t, "diff to missing", err, bullpen.ENOTFOUND)
	})
}
