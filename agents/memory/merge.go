package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// duplicate returns the agent's entry of the same audience that in nearly
// repeats (word overlap at least MergeAt), or nil. Candidates are the
// best full-text matches, so the check costs one indexed search.
func (s *Service) duplicate(ctx context.Context, agentID int64, in bullpen.MemoryInput) (*bullpen.MemoryEntry, error) {
	hits, err := s.db.MemorySearch(ctx, store.MemoryQuery{AgentID: agentID, Text: in.Text, Channel: in.ChannelID, Limit: 5})
	if err != nil {
		return nil, err
	}
	want := wordSet(in.Text)
	for _, h := range hits {
		if h.Entry.ChannelID == in.ChannelID && jaccard(want, wordSet(h.Entry.Text)) >= s.cfg.MergeAt {
			e := h.Entry
			return &e, nil
		}
	}
	return nil, nil
}

// merge folds in into the near-duplicate old: the newer wording wins,
// a pin is kept, and the history keeps both texts.
func (s *Service) merge(tx *store.Tx, actor bullpen.Member, old bullpen.MemoryEntry, in bullpen.MemoryInput) (bullpen.MemoryEntry, error) {
	pinned := old.Pinned || in.Pinned
	e, err := tx.UpdateMemory(old.ID, bullpen.MemoryUpdate{Text: &in.Text, Kind: &in.Kind, Pinned: &pinned})
	if err != nil {
		return e, err
	}
	return e, tx.AddMemoryHistory(bullpen.MemoryHistory{AgentID: old.AgentID, EntryID: old.ID, Action: bullpen.MemoryMerged,
		ActorID: actor.ID, Before: historyText(old.ChannelID, old.Text), After: historyText(old.ChannelID, in.Text)})
}

// enforceCap expires the agent's least used unpinned entries (fewest
// recalls, longest unrecalled, oldest) while it holds more than Cap,
// keeping each one's text in the history.
func (s *Service) enforceCap(ctx context.Context, actor bullpen.Member, agentID int64) error {
	n, err := s.db.MemoryCount(ctx, agentID)
	if err != nil || n <= s.cfg.Cap {
		return err
	}
	victims, err := s.db.LeastUsedMemory(ctx, agentID, n-s.cfg.Cap)
	if err != nil {
		return err
	}
	_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
		for _, v := range victims {
			h := bullpen.MemoryHistory{AgentID: agentID, Action: bullpen.MemoryExpired, ActorID: actor.ID,
				Before: historyText(v.ChannelID, v.Text), After: fmt.Sprintf("expired: over the cap of %d entries", s.cfg.Cap)}
			if err := tx.DeleteMemory(v.ID, h); err != nil && !bullpen.IsCode(err, bullpen.ENOTFOUND) {
				return err
			}
		}
		return nil
	})
	return err
}

// wordSet is the words of s compared for near-duplicates, with a crude
// plural and tense folding ("deploys", "deployed" → "deploy") so that a
// rewording of the same rule matches.
// historyText is what the history keeps of an entry's text: the history
// is read by every human, so the text of an entry learned in a DM stays
// out of it.
func historyText(channelID int64, text string) string {
	if channelID != 0 {
		return "(learned in a DM: not kept in the history)"
	}
	return text
}

func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range store.MemoryTerms(s) {
		for _, suf := range []string{"ing", "ed", "es", "s"} {
			if len(w) > len(suf)+3 && strings.HasSuffix(w, suf) {
				w = strings.TrimSuffix(w, suf)
				break
			}
		}
		out[w] = true
	}
	return out
}

// jaccard is the overlap of two word sets: shared over all.
func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	shared := 0
	for w := range a {
		if b[w] {
			shared++
		}
	}
	return float64(shared) / float64(len(a)+len(b)-shared)
}
