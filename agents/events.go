package agents

import (
	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

func usageOf(u llm.Usage) *bullpen.TokenUsage {
	return &bullpen.TokenUsage{InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens,
		CacheWriteTokens: u.CacheWriteTokens, OutputTokens: u.OutputTokens}
}

func (s *Service) setStatus(agentID int64, st bullpen.AgentStatus) {
	st.Since = s.cfg.Now().UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status[agentID] = st
}

// Status returns an agent's live status.
func (s *Service) Status(agentID int64) bullpen.AgentStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.status[agentID]
	if !ok {
		return bullpen.AgentStatus{State: bullpen.StatusIdle}
	}
	return st
}
