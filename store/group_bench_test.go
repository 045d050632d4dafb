package store_test

import (
	"context"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// BenchmarkGroupedPosts posts from 16 concurrent writers through
// TransactGrouped, each a message and its event as office.Post writes
// them, and reports the statements (BEGIN and COMMIT not counted) and
// commits per post besides the time.
func BenchmarkGroupedPosts(b *testing.B) {
	for _, d := range storetest.Dialects(b) {
		b.Run(d, func(b *testing.B) {
			ctx := context.Background()
			db, err := store.Open(ctx, storetest.Config(b, d))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			var author, channel int64
			_, err = db.Transact(ctx, func(tx *store.Tx) error {
				m, err := tx.CreateMember(bullpen.Member{Handle: "ada", DisplayName: "Ada", Kind: bullpen.KindHuman})
				if err != nil {
					return err
				}
				c, err := tx.CreateChannel(bullpen.Channel{Name: "general", Kind: bullpen.ChannelPublic, CreatedBy: m.ID})
				author, channel = m.ID, c.ID
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			stmts0, commits0 := db.Counts()
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_, err := db.TransactGrouped(ctx, func(tx *store.Tx) error {
						msg, err := tx.CreateMessage(bullpen.Message{ChannelID: channel, AuthorID: author, Body: "hello", Source: bullpen.SourceAPI})
						if err != nil {
							return err
						}
						_, err = tx.Emit(bullpen.EventMessagePosted, channel, nil, msg)
						return err
					})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			stmts, commits := db.Counts()
			b.ReportMetric(float64(stmts-stmts0)/float64(b.N), "stmts/post")
			b.ReportMetric(float64(b.N)/float64(max(1, commits-commits0)), "posts/commit")
		})
	}
}
