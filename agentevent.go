package bullpen

import "encoding/json"

// Event types written by the agents runtime.
const (
	EventAgentHired    = "agent.hired"
	EventAgentFired    = "agent.fired"
	EventAgentUpdated  = "agent.updated"
	EventWakeQueued    = "agent.wake_queued"
	EventTurnStarted   = "agent.turn_started"
	EventTurnFinished  = "agent.turn_finished"
	EventTurnFailed    = "agent.turn_failed"
	EventTurnAbandoned = "agent.turn_abandoned"
	EventToolStarted   = "agent.tool_started"
	EventToolFinished  = "agent.tool_finished"
	EventLimitReached  = "agent.limit_reached"
	EventAgentDelta    = "agent.delta"  // ephemeral: model text as it streams
	EventAgentStatus   = "agent.status" // ephemeral: the live status, e.g. waiting for the model
)

// Limits that can stop an agent.
const (
	LimitHops        = "hop_budget"
	LimitRate        = "rate_limit"
	LimitSteps       = "turn_steps"
	LimitTurnTokens  = "turn_tokens"
	LimitDailyTokens = "daily_tokens"
	LimitTaskTokens  = "task_tokens"
	LimitDeadline    = "turn_deadline"
)

// WakeQueued is the payload of agent.wake_queued.
type WakeQueued struct {
	WakeID    int64  `json:"wake_id"`
	AgentID   int64  `json:"agent_id"`
	Handle    string `json:"handle"`
	MessageID int64  `json:"message_id,omitempty"`
	Reason    string `json:"reason"`
}

// WakeQueuedOf decodes an agent.wake_queued event.
func WakeQueuedOf(ev Event) (WakeQueued, error) {
	return DecodePayload[WakeQueued](ev, EventWakeQueued)
}

// TurnEvent is the payload of agent.turn_started, agent.turn_finished,
// agent.turn_failed and agent.turn_abandoned.
type TurnEvent struct {
	TurnID  int64   `json:"turn_id"`
	AgentID int64   `json:"agent_id"`
	Handle  string  `json:"handle,omitempty"`
	Wakes   []int64 `json:"wakes,omitempty"`
	// MessageIDs are the messages that woke the turn and ThreadID the
	// root its answer goes under (turn_started only), so the channel can
	// show the live line on the message being worked on.
	MessageIDs []int64     `json:"message_ids,omitempty"`
	ThreadID   int64       `json:"thread_id,omitempty"`
	Reasons    []string    `json:"reasons,omitempty"`
	Provider   string      `json:"provider,omitempty"`
	Model      string      `json:"model,omitempty"`
	Steps      int         `json:"steps,omitempty"`
	DurationMS int64       `json:"duration_ms,omitempty"`
	Usage      *TokenUsage `json:"usage,omitempty"`
	Error      string      `json:"error,omitempty"`
	Simulated  bool        `json:"simulated,omitempty"`
}

// TurnOf decodes an agent.turn_* event.
func TurnOf(ev Event) (TurnEvent, error) {
	return DecodePayload[TurnEvent](ev, EventTurnStarted, EventTurnFinished, EventTurnFailed, EventTurnAbandoned)
}

// TokenUsage is a turn's token counts, as a turn event reports them.
type TokenUsage struct {
	InputTokens       int `json:"input_tokens"`
	CachedInputTokens int `json:"cached_input_tokens"`
	CacheWriteTokens  int `json:"cache_write_tokens"`
	OutputTokens      int `json:"output_tokens"`
}

// ToolEvent is the payload of agent.tool_started and agent.tool_finished.
type ToolEvent struct {
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

// ToolOf decodes an agent.tool_* event.
func ToolOf(ev Event) (ToolEvent, error) {
	return DecodePayload[ToolEvent](ev, EventToolStarted, EventToolFinished)
}

// LimitEvent is the payload of agent.limit_reached.
type LimitEvent struct {
	AgentID   int64  `json:"agent_id"`
	Handle    string `json:"handle"`
	Limit     string `json:"limit"`
	Detail    string `json:"detail"`
	MessageID int64  `json:"message_id,omitempty"`
	TurnID    int64  `json:"turn_id,omitempty"`
	// Budget is the limit's value (the hop budget), ThreadID the thread
	// the stopped chain ran in (its root; the message itself at top level).
	Budget   int   `json:"budget,omitempty"`
	ThreadID int64 `json:"thread_id,omitempty"`
}

// LimitOf decodes an agent.limit_reached event.
func LimitOf(ev Event) (LimitEvent, error) {
	return DecodePayload[LimitEvent](ev, EventLimitReached)
}

// DeltaEvent is the payload of the ephemeral agent.delta.
type DeltaEvent struct {
	TurnID  int64  `json:"turn_id"`
	AgentID int64  `json:"agent_id"`
	Text    string `json:"text"`
}

// DeltaOf decodes an agent.delta event.
func DeltaOf(ev Event) (DeltaEvent, error) {
	return DecodePayload[DeltaEvent](ev, EventAgentDelta)
}

// AgentFiredEvent is the payload of agent.fired.
type AgentFiredEvent struct {
	AgentID int64  `json:"agent_id"`
	Handle  string `json:"handle"`
}

// AgentFiredOf decodes an agent.fired event.
func AgentFiredOf(ev Event) (AgentFiredEvent, error) {
	return DecodePayload[AgentFiredEvent](ev, EventAgentFired)
}

// AgentOf decodes the AgentView of an agent.hired or agent.updated event.
func AgentOf(ev Event) (AgentView, error) {
	return DecodePayload[AgentView](ev, EventAgentHired, EventAgentUpdated)
}

// Agent statuses, for the dashboard's live list.
const (
	StatusIdle     = "idle"
	StatusThinking = "thinking"
	StatusTool     = "tool"
	StatusWaiting  = "waiting" // a model call has not answered yet
)

// AgentStatusEvent is the payload of the ephemeral agent.status.
type AgentStatusEvent struct {
	AgentID int64       `json:"agent_id"`
	Handle  string      `json:"handle"`
	Status  AgentStatus `json:"status"`
}

// StatusOf decodes an agent.status event.
func StatusOf(ev Event) (AgentStatusEvent, error) {
	return DecodePayload[AgentStatusEvent](ev, EventAgentStatus)
}

// Why an agent woke: the reasons of agent.wake_queued and of a turn.
const (
	ReasonMention  = "mention"  // @handle
	ReasonAll      = "all"      // @all or @here
	ReasonDM       = "dm"       // a message in a DM with the agent
	ReasonThread   = "thread"   // a reply in a thread the agent took part in
	ReasonApproval = "approval" // a human answered the agent's approval request
)

func agentKinds() []EventKind {
	turn := func(name, label string, line func(Event, EventNames) (EventLine, error)) EventKind {
		return EventKind{Name: name, Label: label, Group: GroupTurns, Visibility: VisibleChannel, Actor: "agent_id",
			Decode: decoder(TurnOf), Line: line}
	}
	return []EventKind{
		{Name: EventAgentHired, Label: "Agent hired", Group: GroupPeople, Visibility: VisibleEveryone, Actor: "id",
			Decode: decoder(AgentOf), Line: agentHired},
		{Name: EventAgentUpdated, Label: "Agent updated", Group: GroupPeople, Visibility: VisibleEveryone, Actor: "id",
			Decode: decoder(AgentOf), Line: agentUpdated},
		{Name: EventAgentFired, Label: "Agent let go", Group: GroupPeople, Visibility: VisibleEveryone, Actor: "agent_id",
			Decode: decoder(AgentFiredOf), Line: agentFired},
		{Name: EventWakeQueued, Label: "Agent woken", Visibility: VisibleChannel, Actor: "agent_id", Detail: true,
			Decode: decoder(WakeQueuedOf), Line: wakeQueued},
		turn(EventTurnStarted, "Turn started", turnStarted),
		turn(EventTurnFinished, "Turn finished", turnFinished),
		turn(EventTurnFailed, "Turn failed", turnFailed),
		turn(EventTurnAbandoned, "Turn abandoned", turnAbandoned),
		{Name: EventToolStarted, Label: "Tool call started", Group: GroupTools, Visibility: VisibleChannel, Actor: "agent_id", Detail: true,
			Decode: decoder(ToolOf), Line: toolStarted},
		{Name: EventToolFinished, Label: "Tool call finished", Group: GroupTools, Visibility: VisibleChannel, Actor: "agent_id",
			Decode: decoder(ToolOf), Line: toolFinished},
		{Name: EventLimitReached, Label: "Stopped by a limit", Group: GroupLimits, Visibility: VisibleChannel, Actor: "agent_id",
			Decode: decoder(LimitOf), Line: limitReached},
		{Name: EventAgentDelta, Label: "Model text", Visibility: VisibleChannel, Actor: "agent_id", Ephemeral: true,
			Decode: decoder(DeltaOf)},
		{Name: EventAgentStatus, Label: "Agent status", Visibility: VisibleChannel, Actor: "agent_id", Ephemeral: true,
			Decode: decoder(StatusOf)},
	}
}
