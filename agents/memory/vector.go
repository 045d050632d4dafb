package memory

import (
	"context"
	"math"
	"slices"

	"github.com/bullpen-hq/bullpen"
)

// vectorCandidates is how many of the entries most similar to the
// trigger a recall weighs besides its full-text matches.
const vectorCandidates = 20

// withVectors rescores a recall's full-text hits with the cosine
// similarity of each entry's vector to the trigger's, and adds the
// entries most similar to it that the full text missed (a paraphrase):
//
//	score = fts/best fts (0-1, 0 without a match) + cosine (0-1, 0 below MinSimilarity or without a vector)
//
// so both signals weigh the same, and an entry found by both ranks above
// one found by either. Why is "match", "similar" or "match+similar". It
// reads the vectors of at most Cap entries, scored here in Go.
func (s *Service) withVectors(ctx context.Context, agentID, channelID int64, model string, q []float32, hits []bullpen.MemoryHit) ([]bullpen.MemoryHit, error) {
	vs, err := s.db.MemoryVectors(ctx, agentID, channelID, model, s.cfg.Cap)
	if err != nil {
		return nil, err
	}
	sim := make(map[int64]float64, len(vs))
	for _, v := range vs {
		if c := cosine(q, v.Vector); c >= s.cfg.MinSimilarity {
			sim[v.ID] = c
		}
	}
	best := 0.0
	for _, h := range hits {
		best = max(best, h.Score)
	}
	out := make([]bullpen.MemoryHit, 0, len(hits)+vectorCandidates)
	have := map[int64]bool{}
	for _, h := range hits {
		have[h.Entry.ID] = true
		score := 0.0
		if best > 0 {
			score = h.Score / best
		}
		why := "match"
		if c, ok := sim[h.Entry.ID]; ok {
			score += c
			why = "match+similar"
		}
		out = append(out, bullpen.MemoryHit{Entry: h.Entry, Score: score, Why: why})
	}
	var more []int64
	for id := range sim {
		if !have[id] {
			more = append(more, id)
		}
	}
	slices.SortFunc(more, func(a, b int64) int { return cmpScore(sim[b], sim[a]) })
	more = more[:min(len(more), vectorCandidates)]
	es, err := s.db.MemoryEntriesByID(ctx, more)
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		out = append(out, bullpen.MemoryHit{Entry: e, Score: sim[e.ID], Why: "similar"})
	}
	slices.SortStableFunc(out, func(a, b bullpen.MemoryHit) int { return cmpScore(b.Score, a.Score) })
	return out, nil
}

// cosine is the cosine similarity of a and b; 0 when their lengths
// differ or either is zero.
func cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
