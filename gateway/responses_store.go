package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// StoredResponse is what the gateway keeps of a Responses answer so that a
// later request can continue it with previous_response_id: the whole
// conversation it ended (the input items, previous context included, then
// the output items). A compaction summary made for a Chat-only provider
// is kept the same way, under its own id.
type StoredResponse struct {
	ID      string
	AgentID int64 // the agent member whose turn made it: only it may continue it
	TurnID  int64
	Items   json.RawMessage // a JSON array of Responses items
	Created time.Time
}

// ResponseStore keeps StoredResponses. A response belongs to its agent:
// GetResponse of another agent's id is ENOTFOUND, exactly as for an id
// that never existed, so an agent cannot even learn that it exists.
type ResponseStore interface {
	PutResponse(ctx context.Context, r StoredResponse) error
	GetResponse(ctx context.Context, agentID int64, id string) (StoredResponse, error)
}

// Bounds of the memory store: the oldest response is forgotten first once
// either is passed.
const (
	DefaultStoredResponses = 4096
	DefaultStoredBytes     = 256 << 20 // of Items
)

// MemoryResponses is a ResponseStore in memory, bounded to a number of
// responses; the gateway's default.
type MemoryResponses struct {
	mu       sync.Mutex
	max      int
	maxBytes int
	bytes    int
	byID     map[string]StoredResponse
	order    []string
}

// NewMemoryResponses returns a store keeping at most max responses
// (DefaultStoredResponses when max ≤ 0) and DefaultStoredBytes of items.
func NewMemoryResponses(max int) *MemoryResponses {
	if max <= 0 {
		max = DefaultStoredResponses
	}
	return &MemoryResponses{max: max, maxBytes: DefaultStoredBytes, byID: map[string]StoredResponse{}}
}

// PutResponse implements ResponseStore.
func (m *MemoryResponses) PutResponse(_ context.Context, r StoredResponse) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.byID[r.ID]; ok {
		m.bytes -= len(old.Items)
	} else {
		m.order = append(m.order, r.ID)
	}
	m.byID[r.ID] = r
	m.bytes += len(r.Items)
	for len(m.order) > 1 && (len(m.order) > m.max || m.bytes > m.maxBytes) {
		m.bytes -= len(m.byID[m.order[0]].Items)
		delete(m.byID, m.order[0])
		m.order = m.order[1:]
	}
	return nil
}

// GetResponse implements ResponseStore.
func (m *MemoryResponses) GetResponse(_ context.Context, agentID int64, id string) (StoredResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.byID[id]
	if !ok || r.AgentID != agentID {
		return StoredResponse{}, bullpen.Errorf(bullpen.ENOTFOUND, "no response %q", id)
	}
	return r, nil
}

// newID is a fresh id with the API's prefix for its kind ("resp", "msg",
// "fc", "rs", "ctc", "cmp").
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}
