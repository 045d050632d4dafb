package office_test

import (
	"context"
	"testing"

	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// Once a token and its channel have been read, an authenticated post
// costs the store only its own writes (the message and its event, plus on
// PostgreSQL the event lock, the next sequence and the notification): no
// read of the token, member or channel.
func TestPostStatements(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		f := newFixture(t, cfg)
		ctx := context.Background()
		post := func() {
			me, err := f.off.Authenticate(ctx, f.adminToken)
			if err != nil {
				t.Fatal(err)
			}
			mustPost(t, f.off, me, f.general.ID, "hello")
		}
		post() // warms the cache (and touches the token, which empties it)
		post()
		stmts0, commits0 := f.db.Counts()
		const n = 10
		for range n {
			post()
		}
		stmts, commits := f.db.Counts()
		want := int64(2)
		if f.db.Dialect() == store.Postgres {
			want = 5
		}
		if got := (stmts - stmts0) / n; got > want || commits-commits0 != n {
			t.Errorf("%d posts: %d statements, %d commits; want at most %d statements a post and %d commits",
				n, stmts-stmts0, commits-commits0, want, n)
		}
	})
}
