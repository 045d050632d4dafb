package bullpen

import "time"

// Wake states: pending until a turn claims it, done when that turn ends,
// dropped when a limit or a firing stops it.
const (
	WakePending = "pending"
	WakeClaimed = "claimed"
	WakeDone    = "done"
	WakeDropped = "dropped"
)

// Turn states.
const (
	TurnRunning   = "running"
	TurnDone      = "done"
	TurnFailed    = "failed"
	TurnAbandoned = "abandoned" // its process died; its wakes went back to pending
)

// Wake is one reason for an agent to take a turn: a message that addressed
// it, or an approval that was answered.
type Wake struct {
	ID         int64     `json:"id"`
	AgentID    int64     `json:"agent_id"`
	ChannelID  int64     `json:"channel_id"`
	MessageID  int64     `json:"message_id,omitempty"`
	ApprovalID int64     `json:"approval_id,omitempty"`
	Reason     string    `json:"reason"`
	State      string    `json:"state"`
	TurnID     int64     `json:"turn_id,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// Turn is one run of an agent: a fresh prompt, a tool loop, usage.
type Turn struct {
	ID                int64      `json:"id"`
	AgentID           int64      `json:"agent_id"`
	ChannelID         int64      `json:"channel_id"`
	State             string     `json:"state"`
	Owner             string     `json:"-"`
	LeaseUntil        time.Time  `json:"-"`
	Provider          string     `json:"provider"`
	Model             string     `json:"model"`
	Steps             int        `json:"steps"`
	InputTokens       int        `json:"input_tokens"`
	CachedInputTokens int        `json:"cached_input_tokens"`
	CacheWriteTokens  int        `json:"cache_write_tokens"`
	OutputTokens      int        `json:"output_tokens"`
	Error             string     `json:"error,omitempty"`
	StartedAt         time.Time  `json:"started_at"`
	FinishedAt        *time.Time `json:"finished_at"`
	ToolCalls         []ToolCall `json:"tool_calls"`
}

// ToolCall is one tool call of a turn.
type ToolCall struct {
	ID         int64     `json:"id"`
	TurnID     int64     `json:"turn_id"`
	AgentID    int64     `json:"agent_id"`
	CallID     string    `json:"call_id"`
	Name       string    `json:"name"`
	Arguments  string    `json:"arguments"`
	Result     string    `json:"result"`
	State      string    `json:"state"`
	StartedAt  time.Time `json:"started_at"`
	DurationMS int64     `json:"duration_ms"`
}
