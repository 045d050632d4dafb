package agents

import (
	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// The agents' event kinds, payloads and decoders are domain nouns of
// the root package, which the timeline, the dashboard and the bridges read
// without importing agents. These aliases keep the agents code's own names.
const (
	EventAgentHired    = bullpen.EventAgentHired
	EventAgentFired    = bullpen.EventAgentFired
	EventAgentUpdated  = bullpen.EventAgentUpdated
	EventWakeQueued    = bullpen.EventWakeQueued
	EventTurnStarted   = bullpen.EventTurnStarted
	EventTurnFinished  = bullpen.EventTurnFinished
	EventTurnFailed    = bullpen.EventTurnFailed
	EventTurnAbandoned = bullpen.EventTurnAbandoned
	EventToolStarted   = bullpen.EventToolStarted
	EventToolFinished  = bullpen.EventToolFinished
	EventLimitReached  = bullpen.EventLimitReached
	EventDelta         = bullpen.EventAgentDelta
	EventStatus        = bullpen.EventAgentStatus

	LimitHops        = bullpen.LimitHops
	LimitRate        = bullpen.LimitRate
	LimitSteps       = bullpen.LimitSteps
	LimitTurnTokens  = bullpen.LimitTurnTokens
	LimitDailyTokens = bullpen.LimitDailyTokens
	LimitDeadline    = bullpen.LimitDeadline

	StatusIdle     = bullpen.StatusIdle
	StatusThinking = bullpen.StatusThinking
	StatusTool     = bullpen.StatusTool
	StatusWaiting  = bullpen.StatusWaiting
)

// Payloads of the agents' events (see the root package).
type (
	WakeQueued  = bullpen.WakeQueued
	TurnEvent   = bullpen.TurnEvent
	TokenUsage  = bullpen.TokenUsage
	ToolEvent   = bullpen.ToolEvent
	LimitEvent  = bullpen.LimitEvent
	DeltaEvent  = bullpen.DeltaEvent
	AgentFired  = bullpen.AgentFiredEvent
	StatusEvent = bullpen.AgentStatusEvent
)

// WakeQueuedOf decodes an agent.wake_queued event.
func WakeQueuedOf(ev bullpen.Event) (WakeQueued, error) { return bullpen.WakeQueuedOf(ev) }

// TurnOf decodes an agent.turn_* event.
func TurnOf(ev bullpen.Event) (TurnEvent, error) { return bullpen.TurnOf(ev) }

// ToolOf decodes an agent.tool_* event.
func ToolOf(ev bullpen.Event) (ToolEvent, error) { return bullpen.ToolOf(ev) }

// LimitOf decodes an agent.limit_reached event.
func LimitOf(ev bullpen.Event) (LimitEvent, error) { return bullpen.LimitOf(ev) }

// DeltaOf decodes an agent.delta event.
func DeltaOf(ev bullpen.Event) (DeltaEvent, error) { return bullpen.DeltaOf(ev) }

// AgentFiredOf decodes an agent.fired event.
func AgentFiredOf(ev bullpen.Event) (AgentFired, error) { return bullpen.AgentFiredOf(ev) }

// AgentOf decodes the bullpen.AgentView of an agent.hired or agent.updated event.
func AgentOf(ev bullpen.Event) (bullpen.AgentView, error) { return bullpen.AgentOf(ev) }

// StatusOf decodes an agent.status event.
func StatusOf(ev bullpen.Event) (StatusEvent, error) { return bullpen.StatusOf(ev) }

func usageOf(u llm.Usage) *TokenUsage {
	return &TokenUsage{InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens,
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
		return bullpen.AgentStatus{State: StatusIdle}
	}
	return st
}
