package view

import "github.com/bullpen-hq/bullpen"

// TurnDetail is everything the turn inspector shows of one turn: what
// woke it, what the model saw and answered, each tool call, the tokens
// with a cost estimate, and the budgets left.
type TurnDetail struct {
	Turn  bullpen.Turn   `json:"turn"` // with its tool calls
	Agent bullpen.Member `json:"agent"`
	// URL is this document's API address; InspectURL the dashboard page.
	URL        string     `json:"url"`
	InspectURL string     `json:"inspect_url"`
	Wakes      []TurnWake `json:"wakes"`
	// SystemPrefix and WorkPacket are what the request that carried the
	// work packet sent (not a CLI's side request before it): the
	// byte-stable prefix and the packet (from the work-packet journal when
	// that request was cut, or none carried it yet). PromptSource says
	// where they were read.
	SystemPrefix string              `json:"system_prefix"`
	WorkPacket   string              `json:"work_packet"`
	PromptSource string              `json:"prompt_source"` // "request", "journal" (cut), "pending" (no request yet) or "" (not recorded)
	ModelCalls   []bullpen.ModelCall `json:"model_calls"`
	// Memory lists the memory entries recalled into the work packet, best
	// first, with their scores and why (match, pinned).
	Memory []bullpen.MemoryRecall `json:"memory"`
	// Cost is nil when the model's price is unknown (never a made-up 0).
	Cost    *TurnCost   `json:"cost"`
	Budgets TurnBudgets `json:"budgets"`
	// Simulated: the scripted simulation answered, not a model.
	Simulated bool `json:"simulated"`
}

// TurnWake is one reason a turn ran, with the message behind it.
type TurnWake struct {
	ID         int64        `json:"id"`
	Reason     string       `json:"reason"`
	MessageID  int64        `json:"message_id,omitempty"`
	ApprovalID int64        `json:"approval_id,omitempty"`
	Message    *WakeMessage `json:"message,omitempty"`
}

// WakeMessage is the trigger message of a wake.
type WakeMessage struct {
	ID        int64  `json:"id"`
	ChannelID int64  `json:"channel_id"`
	Channel   string `json:"channel"` // its name
	ThreadID  int64  `json:"thread_id,omitempty"`
	Author    string `json:"author"` // handle
	Body      string `json:"body"`
	Deleted   bool   `json:"deleted,omitempty"`
}

// ModelPrice is a model's list price in US dollars per million tokens.
type ModelPrice struct {
	Model      string  `json:"model"` // the name or prefix it matched
	Input      float64 `json:"input"`
	Cached     float64 `json:"cached"`
	CacheWrite float64 `json:"cache_write"`
	Output     float64 `json:"output"`
}

// TurnCost is the estimated cost of a turn's tokens at a known price.
type TurnCost struct {
	USD   float64    `json:"usd"`
	Price ModelPrice `json:"price"`
}

// BudgetLeft is one budget: its limit, what is used, what is left.
type BudgetLeft struct {
	Limit int `json:"limit"`
	Used  int `json:"used"`
	Left  int `json:"left"`
}

// TurnBudgets are the budgets of the agent's role as they stand: per turn
// (model calls, tokens) as this turn used them, and per UTC day as today's
// turns used them.
type TurnBudgets struct {
	Steps       BudgetLeft `json:"steps"`
	TurnTokens  BudgetLeft `json:"turn_tokens"`
	DailyTokens BudgetLeft `json:"daily_tokens"`
}

// NewBudgetLeft returns a budget with what is left (never below 0).
func NewBudgetLeft(limit, used int) BudgetLeft {
	return BudgetLeft{Limit: limit, Used: used, Left: max(limit-used, 0)}
}
