package bullpen

// Role is an agent's job description: who it is, which model it runs on,
// what it may do and how much. Package agents reads roles from Markdown
// files with YAML front matter (the body is the system prompt) or from
// plain YAML with a prompt field, and validates them.
type Role struct {
	Handle   string `yaml:"handle" json:"handle"`
	Name     string `yaml:"name" json:"name"`
	Title    string `yaml:"title" json:"title"`
	Provider string `yaml:"provider" json:"provider"` // "", openai, anthropic or scripted; "" is the office default
	Model    string `yaml:"model" json:"model"`
	// Runtime runs the agent's turns: RuntimeBuiltin ("" means it) or an
	// agent CLI inside the agent's sandbox.
	Runtime string `yaml:"runtime" json:"runtime,omitempty"`
	// Command names the agent of runtime acp: one that ships ready
	// (claude-code-acp, codex-acp, gemini) or the command line of any
	// agent in the sandbox image that speaks ACP on stdio.
	Command string `yaml:"command" json:"command,omitempty"`
	// Resume asks a CLI runtime to continue its own session from the
	// agent's previous turn where the CLI supports it (default: a fresh
	// session per turn).
	Resume bool `yaml:"resume" json:"resume,omitempty"`
	// Tools is the allow-list: only these are offered and accepted.
	Tools []string `yaml:"tools" json:"tools"`
	// Approvals lists tools that always need a human's approval.
	Approvals []string    `yaml:"approvals" json:"approvals,omitempty"`
	Sandbox   SandboxSpec `yaml:"sandbox" json:"sandbox"`
	Budgets   Budgets     `yaml:"budgets" json:"budgets"`
	Timeouts  Timeouts    `yaml:"timeouts" json:"timeouts,omitzero"`
	Prompt    string      `yaml:"prompt" json:"prompt"`
	// Source names where the role came from: "starter/lead", "local/x.md", "inline".
	Source string `yaml:"-" json:"source"`
}

// SandboxSpec is what an agent's own sandbox looks like.
type SandboxSpec struct {
	Image  string  `yaml:"image" json:"image,omitempty"`
	CPU    float64 `yaml:"cpu" json:"cpu,omitempty"`
	Memory string  `yaml:"memory" json:"memory,omitempty"` // e.g. 512Mi, 2Gi
	// Network is none (the default), allowlist or open. Commands that use
	// the network need a human's approval.
	Network string   `yaml:"network" json:"network,omitempty"`
	Allow   []string `yaml:"allow" json:"allow,omitempty"` // domains or CIDRs for allowlist
}

// Default budgets.
const (
	DefaultMaxSteps      = 8
	DefaultMaxTurnTokens = 120_000
	DefaultDailyTokens   = 2_000_000
	DefaultTurnsPerHour  = 120
)

// Agent runtimes.
const (
	RuntimeBuiltin    = "builtin"
	RuntimeClaudeCode = "claude-code"
	RuntimeCodex      = "codex"
	RuntimeOpenCode   = "opencode"
	RuntimeACP        = "acp" // any Agent Client Protocol agent (Role.Command)
)

// Network policies of an agent's sandbox.
const (
	NetworkNone      = "none"
	NetworkAllowlist = "allowlist"
	NetworkOpen      = "open"
)

// Budgets bound what one agent may spend. Zero means the default.
type Budgets struct {
	MaxSteps      int `yaml:"max_steps" json:"max_steps"`             // model calls per turn
	MaxTurnTokens int `yaml:"max_turn_tokens" json:"max_turn_tokens"` // input+output tokens per turn
	DailyTokens   int `yaml:"daily_tokens" json:"daily_tokens"`       // input+output tokens per UTC day
	TurnsPerHour  int `yaml:"turns_per_hour" json:"turns_per_hour"`   // rate limit
	// MaxParallelCalls bounds an agent CLI's model calls in flight at once
	// in one turn (0: DefaultMaxParallelCalls).
	MaxParallelCalls int `yaml:"max_parallel_calls" json:"max_parallel_calls,omitempty"`
	// MemoryTokens bounds the recalled memory entries of each work packet
	// (0: DefaultMemoryBudget; -1: recall nothing).
	MemoryTokens int `yaml:"memory_tokens" json:"memory_tokens,omitempty"`
	// TaskTokens bounds the input+output tokens spent on one task, by
	// every turn that worked it (0: no per-task budget). A turn in a
	// task's thread stops when the task's sum reaches it.
	TaskTokens int `yaml:"task_tokens" json:"task_tokens,omitempty"`
}

// MemoryBudget is MemoryTokens or its default; 0 means recall nothing.
func (b Budgets) MemoryBudget() int {
	switch {
	case b.MemoryTokens < 0:
		return 0
	case b.MemoryTokens == 0:
		return DefaultMemoryBudget
	}
	return b.MemoryTokens
}

// DefaultMaxParallelCalls is the default of Budgets.MaxParallelCalls.
const DefaultMaxParallelCalls = 2

// ParallelCalls is MaxParallelCalls or its default.
func (b Budgets) ParallelCalls() int {
	if b.MaxParallelCalls > 0 {
		return b.MaxParallelCalls
	}
	return DefaultMaxParallelCalls
}

// WithDefaults fills zero budgets and the sandbox network policy.
func (r Role) WithDefaults() Role {
	b := &r.Budgets
	if b.MaxSteps == 0 {
		b.MaxSteps = DefaultMaxSteps
	}
	if b.MaxTurnTokens == 0 {
		b.MaxTurnTokens = DefaultMaxTurnTokens
	}
	if b.DailyTokens == 0 {
		b.DailyTokens = DefaultDailyTokens
	}
	if b.TurnsPerHour == 0 {
		b.TurnsPerHour = DefaultTurnsPerHour
	}
	if r.Sandbox.Network == "" {
		r.Sandbox.Network = NetworkNone
	}
	return r
}

// RoleInfo is a role as the catalog lists it.
type RoleInfo struct {
	ID   string `json:"id"`
	Role Role   `json:"role"`
}
