package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// Above the broad-query threshold both dialects rank two windows: title
// matches come first, then the best of the newest body matches.
func TestWikiSearchBroadQuery(t *testing.T) {
	defer store.SetSearchWindows(5, 3)()
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_, err = db.Transact(ctx, func(tx *store.Tx) error {
			m, err := tx.CreateMember(bullpen.Member{Handle: "ada", DisplayName: "Ada", Kind: bullpen.KindHuman})
			if err != nil {
				return err
			}
			for i := range 10 {
				title := fmt.Sprintf("Page %d", i)
				if i == 1 {
					title = "Zebra facts"
				}
				p := bullpen.WikiPage{Slug: fmt.Sprintf("p%d", i), Title: title, Body: "zebra " + strings.Repeat("x ", 20-i),
					Tags: []string{}, Revision: 1, CreatedBy: m.ID, UpdatedBy: m.ID}
				if _, err := tx.CreateWikiPage(p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, prefix := range []bool{false, true} {
			hits, err := db.WikiSearch(ctx, store.WikiSearchQuery{Text: "zebra", Prefix: prefix, Limit: 4})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, h.Slug)
			}
			// p1 by title; then the 3 newest body matches, shorter bodies first.
			if want := "p1 p9 p8 p7"; strings.Join(got, " ") != want {
				t.Errorf("broad search (prefix %v) = %v, want %s", prefix, got, want)
			}
		}
		// Below the threshold every match is ranked.
		hits, err := db.WikiSearch(ctx, store.WikiSearchQuery{Text: "zebra", Limit: 2, Tag: "none"})
		if err != nil || len(hits) != 0 {
			t.Errorf("tagged search = %v, %v", hits, err)
		}
	})
}
