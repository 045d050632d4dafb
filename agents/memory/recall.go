package memory

import (
	"context"
	"fmt"
	"slices"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// candidates is how many full-text matches a recall weighs; of them it
// keeps at most maxMatches, only those scoring at least relevantShare of
// the best one: the budget is a ceiling, not a quota, so a turn carries
// what is relevant to it and no filler.
const (
	candidates    = 20
	maxMatches    = 3
	relevantShare = 0.5
)

// Recall picks the entries of agentID for a turn serving channelID,
// triggered by query (its messages' text): the agent's pinned entries and
// its best full-text matches (and, where the agent's provider offers
// embeddings, its entries most similar in meaning: see withVectors), only those the channel's audience may hear
// (bullpen.MemoryVisibleIn), fitted into budget tokens, pinned first and
// then by score, in the order they go into the work packet. budget 0
// recalls nothing. Recall only reads, so that it stays off the turn's
// write path: the caller records the recall (each entry's count and time,
// and the turn's rows with scores, for the inspector) with
// store.Tx.MarkRecalled in the transaction that journals its packet.
func (s *Service) Recall(ctx context.Context, agentID, channelID int64, query string, budget int) ([]bullpen.MemoryRecall, error) {
	if budget <= 0 {
		return nil, nil
	}
	pinned, hits, err := s.db.MemoryRecallRead(ctx, store.MemoryQuery{AgentID: agentID, Text: query, Channel: channelID, Limit: candidates})
	if err != nil {
		return nil, err
	}
	if model, vec, ok := s.queryVector(ctx, agentID, query); ok {
		if hits, err = s.withVectors(ctx, agentID, channelID, model, vec, hits); err != nil {
			return nil, fmt.Errorf("memory: recall by vectors: %w", err)
		}
	}
	return fit(pinned, hits, channelID, budget), nil
}

// fit orders pinned entries (with their match score when they also
// matched) before the other matches, best first, and keeps each one that
// still fits in budget tokens. The audience rule is checked once more
// here, in code, whatever the query returned.
func fit(pinned []bullpen.MemoryEntry, hits []bullpen.MemoryHit, channelID int64, budget int) []bullpen.MemoryRecall {
	score := map[int64]float64{}
	for _, h := range hits {
		score[h.Entry.ID] = h.Score
	}
	var all []bullpen.MemoryRecall
	seen := map[int64]bool{}
	add := func(e bullpen.MemoryEntry, why string) {
		if seen[e.ID] || !bullpen.MemoryVisibleIn(e, channelID) {
			return
		}
		seen[e.ID] = true
		all = append(all, bullpen.MemoryRecall{EntryID: e.ID, Score: score[e.ID], Why: why, Tokens: bullpen.MemoryTokens(e.Text),
			Text: e.Text, Kind: e.Kind})
	}
	for _, e := range pinned {
		why := "pinned"
		if _, ok := score[e.ID]; ok {
			why = "match+pinned"
		}
		add(e, why)
	}
	slices.SortStableFunc(all, func(a, b bullpen.MemoryRecall) int { return cmpScore(b.Score, a.Score) })
	matched := 0
	for _, h := range hits {
		if matched == maxMatches || h.Score < relevantShare*hits[0].Score {
			break
		}
		if !seen[h.Entry.ID] {
			matched++
		}
		why := h.Why
		if why == "" {
			why = "match"
		}
		add(h.Entry, why)
	}
	var out []bullpen.MemoryRecall
	left := budget
	for _, r := range all {
		if r.Tokens <= left {
			out = append(out, r)
			left -= r.Tokens
		}
	}
	return out
}

func cmpScore(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
