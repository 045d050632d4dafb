package memory_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/memory"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// benchEntries is how many entries the agent of BenchmarkRecall holds.
const benchEntries = 10_000

// benchWords is a vocabulary with a long tail: a few words are in many
// entries (as "deploy" or "test" would be), most in a few.
func benchWords(r *rand.Rand, n int) string {
	words := make([]string, n)
	for i := range words {
		k := int(r.ExpFloat64() * 300) // word rank, exponential: small ranks are common
		words[i] = fmt.Sprintf("w%x", k)
	}
	return strings.Join(words, " ")
}

// BenchmarkRecall measures one recall (pinned entries, a full-text match
// of a trigger message of 12 words, fitting into the 600-token budget,
// and recording the recall) for an agent with 10,000 entries, on each
// dialect. It reports p50 and p95 in milliseconds.
func BenchmarkRecall(b *testing.B) {
	for _, d := range storetest.Dialects(b) {
		b.Run(d, func(b *testing.B) {
			cfg := storetest.Config(b, d)
			f := newFixture(b, cfg, memory.Config{Cap: 2 * benchEntries})
			r := rand.New(rand.NewPCG(1, 2))
			_, err := f.db.Transact(f.ctx, func(tx *store.Tx) error {
				for i := range benchEntries {
					kind := bullpen.MemoryKinds[i%len(bullpen.MemoryKinds)]
					_, err := tx.CreateMemory(bullpen.MemoryEntry{AgentID: f.eng.ID, Text: benchWords(r, 8+r.IntN(24)), Kind: kind,
						SourceKind: bullpen.MemorySourceHuman, AuthorID: f.ada.ID, Pinned: i%1000 == 0})
					if err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			settle(b, cfg)
			lat := make([]time.Duration, 0, b.N)
			recalled := 0
			b.ResetTimer()
			for range b.N {
				q := benchWords(r, 12)
				start := time.Now()
				rs, err := f.m.Recall(f.ctx, f.eng.ID, f.general.ID, q, bullpen.DefaultMemoryBudget)
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				recalled += len(rs)
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			pct := func(p float64) float64 {
				return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.95), "p95-ms")
			b.ReportMetric(float64(recalled)/float64(len(lat)), "entries/op")
		})
	}
}

// settle brings a PostgreSQL test database to the steady state of an
// office whose memory grew over days: the bulk load's statistics taken
// and its pages vacuumed, as autovacuum would have done long before,
// rather than in the middle of the measured recalls.
func settle(b *testing.B, cfg store.Config) {
	b.Helper()
	if cfg.URL == "" {
		return
	}
	db, err := sql.Open("pgx", cfg.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("VACUUM ANALYZE memory_entries"); err != nil {
		b.Fatalf("settle: %v", err)
	}
}

// benchDims is the size of the vectors of BenchmarkRecallWithEmbeddings,
// as OpenAI's small embeddings model returns.
const benchDims = 1536

// localEmbedder answers at once with random vectors: the benchmark
// measures Bullpen's part of a recall (reading and scoring vectors), not
// the provider's latency.
type localEmbedder struct{ r *rand.Rand }

func (l localEmbedder) Embed(_ context.Context, _ int64, texts []string) (string, [][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = randomVector(l.r)
	}
	return "bench", out, nil
}

func randomVector(r *rand.Rand) []float32 {
	v := make([]float32, benchDims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// BenchmarkRecallWithEmbeddings is BenchmarkRecall for an agent whose
// provider has embeddings: 10,000 entries of which the newest 500 (the
// default cap) carry 1,536-dimension vectors, scored in Go at each recall
// besides the full-text match. The trigger's embedding is answered in
// process. It reports p50 and p95 in milliseconds.
func BenchmarkRecallWithEmbeddings(b *testing.B) {
	for _, d := range storetest.Dialects(b) {
		b.Run(d, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			f := newFixture(b, storetest.Config(b, d), memory.Config{Embedder: localEmbedder{r}})
			_, err := f.db.Transact(f.ctx, func(tx *store.Tx) error {
				for i := range benchEntries {
					e, err := tx.CreateMemory(bullpen.MemoryEntry{AgentID: f.eng.ID, Text: benchWords(r, 8+r.IntN(24)), Kind: bullpen.MemoryFact,
						SourceKind: bullpen.MemorySourceHuman, AuthorID: f.ada.ID, Pinned: i%1000 == 0})
					if err != nil {
						return err
					}
					if i >= benchEntries-bullpen.DefaultMemoryCap {
						if _, err := tx.SetMemoryEmbedding(e.ID, e.Text, "bench", randomVector(r)); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				q := benchWords(r, 12)
				start := time.Now()
				if _, err := f.m.Recall(f.ctx, f.eng.ID, f.general.ID, q, bullpen.DefaultMemoryBudget); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			pct := func(p float64) float64 {
				return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.95), "p95-ms")
		})
	}
}
