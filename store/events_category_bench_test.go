package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// BenchmarkEventCategory times the timeline filtered by a category with
// few matches (kind=sandbox: one event in 200) as the log grows from
// 10,000 to 1,000,000 events, newest first, as a non-admin: 300 pages of
// 50 at each size. It reports each size's p50 and p95 and the p95's growth
// (1M / 10k). Run it with -benchtime 1x: one iteration seeds and measures
// both sizes.
func BenchmarkEventCategory(b *testing.B) {
	for _, dialect := range storetest.Dialects(b) {
		b.Run(dialect, func(b *testing.B) {
			for b.Loop() {
				small := categoryPages(b, dialect, 10_000)
				large := categoryPages(b, dialect, 1_000_000)
				b.ReportMetric(pct(small, 50), "p50_10k_ms")
				b.ReportMetric(pct(small, 95), "p95_10k_ms")
				b.ReportMetric(pct(large, 50), "p50_1m_ms")
				b.ReportMetric(pct(large, 95), "p95_1m_ms")
				b.ReportMetric(pct(large, 95)/pct(small, 95), "p95_growth_x")
			}
		})
	}
}

// categoryPages seeds a fresh database with n events and returns the
// milliseconds of each of 300 kind=sandbox pages.
func categoryPages(b *testing.B, dialect string, n int) []float64 {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	db, err := store.Open(context.Background(), storetest.Config(b, dialect))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.SeedEvents(n); err != nil {
		b.Fatal(err)
	}
	ms := make([]float64, 0, 300)
	f := bullpen.EventFilter{Kinds: []string{"sandbox"}, Before: 1 << 40, Limit: 50}
	for range 300 {
		start := time.Now()
		p, err := db.EventPage(context.Background(), store.EventViewer{ID: 2}, f)
		if err != nil || len(p.Items) == 0 {
			b.Fatalf("page: %d items, %v", len(p.Items), err)
		}
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	return ms
}

// pct is the p-th percentile of ms.
func pct(ms []float64, p int) float64 {
	s := slices.Clone(ms)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
