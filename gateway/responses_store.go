package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"

	"github.com/bullpen-hq/bullpen"
)

// ResponseStore keeps what the gateway needs to continue a Responses
// answer with previous_response_id: the whole conversation the answer
// ended (the input items, previous context included, then the output
// items) as a JSON array, under the response's id, with the agent member
// whose turn made it and that turn. A compaction summary made for a
// Chat-only provider is kept the same way, under its own id. A response
// belongs to its agent: GetResponse of another agent's id is ENOTFOUND,
// exactly as for an id that never existed, so an agent cannot even learn
// that it exists. *store.DB implements it.
type ResponseStore interface {
	PutResponse(ctx context.Context, id string, agentID, turnID int64, items []byte) error
	GetResponse(ctx context.Context, agentID int64, id string) ([]byte, error)
}

// storedResponse is one response in a MemoryResponses.
type storedResponse struct {
	agentID, turnID int64
	items           []byte
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
	byID     map[string]storedResponse
	order    []string
}

// NewMemoryResponses returns a store keeping at most max responses
// (DefaultStoredResponses when max ≤ 0) and DefaultStoredBytes of items.
func NewMemoryResponses(max int) *MemoryResponses {
	if max <= 0 {
		max = DefaultStoredResponses
	}
	return &MemoryResponses{max: max, maxBytes: DefaultStoredBytes, byID: map[string]storedResponse{}}
}

// PutResponse implements ResponseStore.
func (m *MemoryResponses) PutResponse(_ context.Context, id string, agentID, turnID int64, items []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.byID[id]; ok {
		m.bytes -= len(old.items)
	} else {
		m.order = append(m.order, id)
	}
	m.byID[id] = storedResponse{agentID: agentID, turnID: turnID, items: append([]byte(nil), items...)}
	m.bytes += len(items)
	for len(m.order) > 1 && (len(m.order) > m.max || m.bytes > m.maxBytes) {
		m.bytes -= len(m.byID[m.order[0]].items)
		delete(m.byID, m.order[0])
		m.order = m.order[1:]
	}
	return nil
}

// GetResponse implements ResponseStore.
func (m *MemoryResponses) GetResponse(_ context.Context, agentID int64, id string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.byID[id]
	if !ok || r.agentID != agentID {
		return nil, bullpen.Errorf(bullpen.ENOTFOUND, "no response %q", id)
	}
	return r.items, nil
}

// newID is a fresh id with the API's prefix for its kind ("resp", "msg",
// "fc", "rs", "ctc", "cmp").
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}
