package bullpen

import "time"

// AgentView is an agent as the API shows it: its member, role and live status.
type AgentView struct {
	Member
	Role    string      `json:"role"`
	State   string      `json:"state"` // active or fired
	Spec    Role        `json:"spec"`
	Status  AgentStatus `json:"status"`
	HiredAt time.Time   `json:"hired_at"`
	// Network is where an agent CLI's network policy stands with the
	// humans; nil for the built-in runtime or a sandbox without network.
	Network *NetworkApproval `json:"network_approval,omitempty"`
}

// NetworkApproval is a human's approval of the network policy an agent
// CLI's sandbox runs with. Until its current policy is approved, the
// CLI's sandbox runs with network none; a policy change voids it.
type NetworkApproval struct {
	Policy string `json:"policy"` // e.g. "allowlist 10.0.0.5/32"
	// State is unasked (asked at the agent's next turn), pending,
	// approved or denied.
	State      string     `json:"state"`
	ApprovalID int64      `json:"approval_id,omitempty"`
	AnsweredBy int64      `json:"answered_by,omitempty"`
	AnsweredAt *time.Time `json:"answered_at,omitempty"`
}

// NetworkUnasked is the state of a CLI agent's network policy no human
// was asked about yet.
const NetworkUnasked = "unasked"

// HireInput hires an agent from a catalog role or from an inline spec.
// Handle, Name and Title override the role's.
type HireInput struct {
	Role   string `json:"role"`
	Spec   *Role  `json:"spec"`
	Handle string `json:"handle"`
	Name   string `json:"name"`
	Title  string `json:"title"`
}

// AgentUpdate edits an agent's role; nil fields stay as they are.
type AgentUpdate struct {
	Name      *string      `json:"name"`
	Title     *string      `json:"title"`
	Provider  *string      `json:"provider"`
	Model     *string      `json:"model"`
	Runtime   *string      `json:"runtime"` // builtin (or ""), claude-code, codex, opencode
	Prompt    *string      `json:"prompt"`
	Tools     *[]string    `json:"tools"`
	Approvals *[]string    `json:"approvals"`
	Sandbox   *SandboxSpec `json:"sandbox"`
	Budgets   *Budgets     `json:"budgets"`
}

// AgentStatus is what an agent is doing right now.
type AgentStatus struct {
	State  string `json:"state"`          // idle, thinking, tool, waiting
	Tool   string `json:"tool,omitempty"` // when State is tool
	TurnID int64  `json:"turn_id,omitempty"`
	// Detail says it in words, e.g. "waiting for the model, 35 s".
	Detail  string    `json:"detail,omitempty"`
	WaitedS int64     `json:"waited_s,omitempty"` // when State is waiting
	Since   time.Time `json:"since"`
}
