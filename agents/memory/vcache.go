package memory

import (
	"context"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen/store"
)

// maxCachedVectors bounds the vector cache (about 6 KB a vector of 1,536
// dimensions): past it the cache starts afresh.
const maxCachedVectors = 20_000

// vectorCache keeps the entries' vectors read from the store, keyed by
// entry, model and updated time (an edit moves it, so a stale vector is
// never used), so that a recall reads only the keys of the agent's
// vectors and the few it has not seen.
type vectorCache struct {
	mu sync.Mutex
	m  map[int64]cachedVector
}

type cachedVector struct {
	model   string
	updated time.Time
	vec     []float32
}

// vectors returns the vectors by model of the agent's newest limit
// entries that a turn in channel may recall, each of length 1.
func (s *Service) vectors(ctx context.Context, agentID, channelID int64, model string, limit int) ([]store.MemoryVector, error) {
	keys, err := s.db.MemoryVectorKeys(ctx, agentID, channelID, model, limit)
	if err != nil {
		return nil, err
	}
	c := &s.vcache
	out := make([]store.MemoryVector, 0, len(keys))
	var missing []int64
	want := map[int64]time.Time{}
	c.mu.Lock()
	for _, k := range keys {
		if v, ok := c.m[k.ID]; ok && v.model == model && v.updated.Equal(k.UpdatedAt) {
			out = append(out, store.MemoryVector{ID: k.ID, Vector: v.vec})
		} else {
			missing = append(missing, k.ID)
			want[k.ID] = k.UpdatedAt
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	read, err := s.db.MemoryVectors(ctx, model, missing)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m)+len(read) > maxCachedVectors {
		c.m = map[int64]cachedVector{}
	}
	for _, v := range read {
		if v.Vector = unit(v.Vector); v.Vector == nil {
			continue
		}
		// The key read before the vector: should the entry have changed in
		// between, the next recall sees a newer key and reads it again.
		c.m[v.ID] = cachedVector{model: model, updated: want[v.ID], vec: v.Vector}
		out = append(out, v)
	}
	return out, nil
}
