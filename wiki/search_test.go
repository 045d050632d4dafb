package wiki_test

import (
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

func TestSearch(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		f.save(f.ada, bullpen.WikiSaveInput{Title: "Deploy Guide", Body: "How we ship the service to production.", Tags: []string{"ops"}})
		f.save(f.ada, bullpen.WikiSaveInput{Title: "Kitchen", Body: "The coffee machine is next to the deploy board. Deploy with care <b>&</b> coffee.", Tags: []string{"office"}})
		f.save(f.ada, bullpen.WikiSaveInput{Title: "Archive", Body: "old deploy notes"})
		f.w.Delete(f.ctx, f.ada, "archive")

		hits, err := f.w.Search(f.ctx, f.ada, bullpen.WikiSearchOptions{Query: "deploy"})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 2 || hits[0].Slug != "deploy-guide" || hits[1].Slug != "kitchen" {
			t.Fatalf("search deploy = %+v; want the title match first and no deleted page", hits)
		}
		if hits[0].Rank < hits[1].Rank {
			t.Errorf("ranks %v < %v; want best first", hits[0].Rank, hits[1].Rank)
		}
		k := hits[1]
		if !strings.Contains(k.SnippetHTML, "<mark>") || strings.Contains(k.SnippetHTML, "<b>") || !strings.Contains(k.Snippet, "deploy") {
			t.Errorf("kitchen snippet = %q / %q; want marked, escaped", k.Snippet, k.SnippetHTML)
		}
		// Stemming, prefixes and the tag filter.
		for _, tt := range []struct {
			q, tag string
			prefix bool
			want   []string
		}{
			{"shipping", "", false, []string{"deploy-guide"}},
			{"coff", "", false, nil},
			{"coff", "", true, []string{"kitchen"}},
			{"deploy co", "", true, []string{"kitchen"}},
			{"deploy", "office", false, []string{"kitchen"}},
			{"deploy", "OPS", false, []string{"deploy-guide"}},
			{"deploy coffee", "", false, []string{"kitchen"}},
			{"ops", "", false, []string{"deploy-guide"}},
			{"nothing-here-at-all", "", false, nil},
		} {
			hits, err := f.w.Search(f.ctx, f.ada, bullpen.WikiSearchOptions{Query: tt.q, Tag: tt.tag, Prefix: tt.prefix})
			if err != nil {
				t.Fatalf("search %q: %v", tt.q, err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, h.Slug)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("search %q tag %q = %v, want %v", tt.q, tt.tag, got, tt.want)
			}
		}
	})
}

// Whatever a user types, search answers without a syntax error.
func TestSearchHostileQueries(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		f.save(f.ada, bullpen.WikiSaveInput{Title: "Quotes", Body: `He said "hello" and O'Brien left: AND OR NOT near`})
		queries := []string{
			`"`, `""`, `"hello`, `hello"`, `'`, `O'Brien`, `*`, `hello*`, `-hello`, `+hello`, `AND`, `OR OR`, `NOT`,
			`hello AND`, `NEAR(hello left)`, `(`, `)`, `title:hello`, `{title body}: hello`, `^hello`, `hello:*`,
			`!hello`, `hello & | ! <->`, `\`, `%`, `_`, `;DROP TABLE wiki_pages;--`, "\x00", "\u200b", `日本語`, `   `, ``,
			strings.Repeat("a ", 400), `a:b:c`, `'hello':*`, `<-> <1>`, `hello <2> left`,
		}
		for _, q := range queries {
			for _, prefix := range []bool{false, true} {
				if _, err := f.w.Search(f.ctx, f.ada, bullpen.WikiSearchOptions{Query: q, Prefix: prefix}); err != nil {
					t.Errorf("Search(%q, prefix %v): %v", q, prefix, err)
				}
			}
		}
		hits, _ := f.w.Search(f.ctx, f.ada, bullpen.WikiSearchOptions{Query: `O'Brien "hello"`})
		if len(hits) != 1 {
			t.Errorf("search with quotes found %d pages, want 1", len(hits))
		}
		_, err := f.w.Search(f.ctx, f.ada, bullpen.WikiSearchOptions{Query: "x", Tag: "bad tag"})
		wantCode(t, "bad tag", err, bullpen.EINVALID)
		_, err = f.w.Search(f.ctx, f.ada, bullpen.WikiSearchOptions{Query: "x", Limit: 1000})
		wantCode(t, "big limit", err, bullpen.EINVALID)
	})
}
