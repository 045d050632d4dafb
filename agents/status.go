package agents

import (
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// statuses holds each agent's live status, as its turn sets it and the
// dashboard and agent views read it.
type statuses struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[int64]bullpen.AgentStatus
}

func newStatuses(now func() time.Time) *statuses {
	return &statuses{now: now, m: map[int64]bullpen.AgentStatus{}}
}

func (b *statuses) setStatus(agentID int64, st bullpen.AgentStatus) {
	st.Since = b.now().UTC()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[agentID] = st
}

// Status returns an agent's live status.
func (b *statuses) Status(agentID int64) bullpen.AgentStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.m[agentID]
	if !ok {
		return bullpen.AgentStatus{State: bullpen.StatusIdle}
	}
	return st
}
