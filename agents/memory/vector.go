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
	vs, err := s.vectors(ctx, agentID, channelID, model, s.cfg.Cap)
	if err != nil {
		return nil, err
	}
	sim := make(map[int64]float64, len(vs))
	q = unit(q)
	for _, v := range vs {
		if c := dot(q, v.Vector); c >= s.cfg.MinSimilarity {
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

// unit is v scaled to length 1 (a copy); nil for a zero vector. The
// cosine similarity of two unit vectors is their dot product.
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return nil
	}
	inv := 1 / math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// dot is the dot product of two unit vectors (their cosine similarity);
// 0 when their lengths differ.
func dot(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return float64(s0 + s1 + s2 + s3)
}
