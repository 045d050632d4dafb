package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// MemoryVector is the embedding of one entry's current text.
type MemoryVector struct {
	ID     int64
	Vector []float32
}

// clearEmbedding adds to an update of an entry's text the clearing of its
// vector: a vector never describes other text than the entry's.
func clearEmbedding(set map[string]any) {
	set["embedding"] = nil
	set["embedding_model"] = ""
}

// SetMemoryEmbedding stores the vector model made of an entry's text,
// only while the entry still has that text (an edit since wins: its own
// embedding follows). It reports whether the entry took it.
func (tx *Tx) SetMemoryEmbedding(id int64, text, model string, vec []float32) (bool, error) {
	if model == "" || len(vec) == 0 {
		return false, bullpen.Errorf(bullpen.EINVALID, "an embedding needs its model and a vector")
	}
	res := tx.g.Model(&memoryRow{}).Where("id = ? AND text = ?", id, text).
		Updates(map[string]any{"embedding": encodeVector(vec), "embedding_model": model})
	if res.Error != nil {
		return false, fmt.Errorf("store: memory embedding %d: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// MemoryVectorKey names the vector of one entry as it stands: an entry
// whose updated time has not moved still has the same text, so the same
// vector (a cache of vectors can key on it).
type MemoryVectorKey struct {
	ID        int64
	UpdatedAt time.Time
}

// MemoryVectorKeys returns the keys of the vectors made by model of an
// agent's confirmed entries that a turn in channel may recall (a negative
// channel: all), the newest limit of them. It reads no vector.
func (db *DB) MemoryVectorKeys(ctx context.Context, agentID, channel int64, model string, limit int) ([]MemoryVectorKey, error) {
	g := db.read(ctx).Model(&memoryRow{}).Select("id, updated_at").
		Where("agent_id = ? AND embedding_model = ? AND proposed_to = 0 AND embedding IS NOT NULL", agentID, model)
	if channel >= 0 {
		g = g.Where("channel_id = 0 OR channel_id = ?", channel)
	}
	var keys []MemoryVectorKey
	if err := g.Order("id DESC").Limit(limit).Scan(&keys).Error; err != nil {
		return nil, fmt.Errorf("store: memory vector keys: %w", err)
	}
	for i := range keys {
		keys[i].UpdatedAt = keys[i].UpdatedAt.UTC()
	}
	return keys, nil
}

// MemoryVectors returns the vectors made by model of the entries of ids
// that have one.
func (db *DB) MemoryVectors(ctx context.Context, model string, ids []int64) ([]MemoryVector, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []struct {
		ID        int64
		Embedding []byte
	}
	err := db.read(ctx).Model(&memoryRow{}).Select("id, embedding").Where("id IN ? AND embedding_model = ?", ids, model).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: memory vectors: %w", err)
	}
	out := make([]MemoryVector, 0, len(rows))
	for _, r := range rows {
		if v := decodeVector(r.Embedding); v != nil {
			out = append(out, MemoryVector{ID: r.ID, Vector: v})
		}
	}
	return out, nil
}

// MemoryEntriesByID returns the entries of ids that exist, in the order
// of ids.
func (db *DB) MemoryEntriesByID(ctx context.Context, ids []int64) ([]bullpen.MemoryEntry, error) {
	if len(ids) == 0 {
		return []bullpen.MemoryEntry{}, nil
	}
	var rows []memoryRow
	if err := db.read(ctx).Select(memoryCols).Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: memory entries: %w", err)
	}
	byID := make(map[int64]memoryRow, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	out := make([]bullpen.MemoryEntry, 0, len(rows))
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, r.entry())
		}
	}
	return out, nil
}

// encodeVector is vec as little-endian float32s.
func encodeVector(vec []float32) []byte {
	b := make([]byte, 4*len(vec))
	for i, f := range vec {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// decodeVector reads encodeVector's bytes; nil when they are no vector.
func decodeVector(b []byte) []float32 {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// DeleteMemoryUnchanged removes an unpinned entry that still has text,
// recording h, as DeleteMemory does; an entry since gone, edited or
// pinned is ECONFLICT, so that a change decided on what was read never
// undoes a change made since.
func (tx *Tx) DeleteMemoryUnchanged(id int64, text string, h bullpen.MemoryHistory) error {
	res := tx.g.Where("id = ? AND text = ? AND pinned = ?", id, text, false).Delete(&memoryRow{})
	if res.Error != nil {
		return fmt.Errorf("store: delete memory %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.Errorf(bullpen.ECONFLICT, "memory entry %d changed or went since it was read", id)
	}
	h.EntryID = id
	return tx.AddMemoryHistory(h)
}

// MemoryOverCap returns the agents holding more than limit entries.
func (db *DB) MemoryOverCap(ctx context.Context, limit int) ([]int64, error) {
	var ids []int64
	err := db.read(ctx).Model(&memoryRow{}).Group("agent_id").Having("count(*) > ?", limit).Order("agent_id").Pluck("agent_id", &ids).Error
	if err != nil {
		return nil, fmt.Errorf("store: memory over cap: %w", err)
	}
	return ids, nil
}
