package agents

import (
	"encoding/json"
	"time"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

// Event types written by the agents runtime.
const (
	EventAgentHired       = "agent.hired"
	EventAgentFired       = "agent.fired"
	EventAgentUpdated     = "agent.updated"
	EventWakeQueued       = "agent.wake_queued"
	EventTurnStarted      = "agent.turn_started"
	EventTurnFinished     = "agent.turn_finished"
	EventTurnFailed       = "agent.turn_failed"
	EventTurnAbandoned    = "agent.turn_abandoned"
	EventToolStarted      = "agent.tool_started"
	EventToolFinished     = "agent.tool_finished"
	EventLimitReached     = "agent.limit_reached"
	EventDelta            = "agent.delta"  // ephemeral: model text as it streams
	EventStatus           = "agent.status" // ephemeral: the live status, e.g. waiting for the model
	EventApprovalAsked    = "approval.requested"
	EventApprovalAnswered = "approval.answered"
)

// Limits that can stop an agent.
const (
	LimitHops        = "hop_budget"
	LimitRate        = "rate_limit"
	LimitSteps       = "turn_steps"
	LimitTurnTokens  = "turn_tokens"
	LimitDailyTokens = "daily_tokens"
	LimitDeadline    = "turn_deadline"
)

// wakePayload is agent.wake_queued.
type wakePayload struct {
	WakeID    int64  `json:"wake_id"`
	AgentID   int64  `json:"agent_id"`
	Handle    string `json:"handle"`
	MessageID int64  `json:"message_id,omitempty"`
	Reason    string `json:"reason"`
}

// turnPayload is agent.turn_*.
type turnPayload struct {
	TurnID     int64     `json:"turn_id"`
	AgentID    int64     `json:"agent_id"`
	Handle     string    `json:"handle,omitempty"`
	Wakes      []int64   `json:"wakes,omitempty"`
	Reasons    []string  `json:"reasons,omitempty"`
	Provider   string    `json:"provider,omitempty"`
	Model      string    `json:"model,omitempty"`
	Steps      int       `json:"steps,omitempty"`
	DurationMS int64     `json:"duration_ms,omitempty"`
	Usage      *llmUsage `json:"usage,omitempty"`
	Error      string    `json:"error,omitempty"`
	Simulated  bool      `json:"simulated,omitempty"`
}

type llmUsage struct {
	InputTokens       int `json:"input_tokens"`
	CachedInputTokens int `json:"cached_input_tokens"`
	CacheWriteTokens  int `json:"cache_write_tokens"`
	OutputTokens      int `json:"output_tokens"`
}

func usageOf(u llm.Usage) *llmUsage {
	return &llmUsage{InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens,
		CacheWriteTokens: u.CacheWriteTokens, OutputTokens: u.OutputTokens}
}

// toolPayload is agent.tool_*.
type toolPayload struct {
	TurnID     int64           `json:"turn_id"`
	AgentID    int64           `json:"agent_id"`
	Handle     string          `json:"handle"`
	CallID     int64           `json:"call_id"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	State      string          `json:"state,omitempty"` // ok, error, approval
	Result     string          `json:"result,omitempty"`
	DurationMS int64           `json:"duration_ms,omitempty"`
}

// limitPayload is agent.limit_reached.
type limitPayload struct {
	AgentID   int64  `json:"agent_id"`
	Handle    string `json:"handle"`
	Limit     string `json:"limit"`
	Detail    string `json:"detail"`
	MessageID int64  `json:"message_id,omitempty"`
	TurnID    int64  `json:"turn_id,omitempty"`
}

// deltaPayload is agent.delta.
type deltaPayload struct {
	TurnID  int64  `json:"turn_id"`
	AgentID int64  `json:"agent_id"`
	Text    string `json:"text"`
}

// Agent statuses, for the dashboard's live list.
const (
	StatusIdle     = "idle"
	StatusThinking = "thinking"
	StatusTool     = "tool"
	StatusWaiting  = "waiting" // a model call has not answered yet
)

// Status is what an agent is doing right now.
type Status struct {
	State  string `json:"state"`          // idle, thinking, tool, waiting
	Tool   string `json:"tool,omitempty"` // when State is tool
	TurnID int64  `json:"turn_id,omitempty"`
	// Detail says it in words, e.g. "waiting for the model, 35 s".
	Detail  string    `json:"detail,omitempty"`
	WaitedS int64     `json:"waited_s,omitempty"` // when State is waiting
	Since   time.Time `json:"since"`
}

// statusPayload is agent.status.
type statusPayload struct {
	AgentID int64  `json:"agent_id"`
	Handle  string `json:"handle"`
	Status  Status `json:"status"`
}

func (s *Service) setStatus(agentID int64, st Status) {
	st.Since = s.cfg.Now().UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status[agentID] = st
}

// Status returns an agent's live status.
func (s *Service) Status(agentID int64) Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.status[agentID]
	if !ok {
		return Status{State: StatusIdle}
	}
	return st
}
