package bullpen

import "time"

// Agent states.
const (
	AgentActive = "active"
	AgentFired  = "fired"
)

// Agent is the agent-specific part of an agent member: where its role came
// from, the role spec (JSON, owned by package agents) and whether it works
// here still.
type Agent struct {
	MemberID  int64      `json:"member_id"`
	Role      string     `json:"role"`
	Spec      string     `json:"-"`
	State     string     `json:"state"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	FiredAt   *time.Time `json:"fired_at,omitempty"`
}
