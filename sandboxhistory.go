package bullpen

import "time"

// SandboxExecEntry is one command in a sandbox's exec history: every exec,
// whoever ran it (a member through the API or the dashboard, or an agent
// through its sandbox tools). Output keeps the head and tail of each
// stream; StdoutBytes and StderrBytes say how much was written in all.
type SandboxExecEntry struct {
	// ID is the exec id (x_…), stable: the dashboard links to it as
	// #sandbox=<sandbox id>&exec=<exec id>.
	ID        string `json:"id"`
	SandboxID string `json:"sandbox_id"`
	Command   string `json:"command"`
	ByID      int64  `json:"by_id"`
	// PTY: a terminal session; Stdout is the text its screen showed
	// (escape codes left out), as StdoutBytes counts it.
	PTY       bool      `json:"pty,omitempty"`
	StartedAt time.Time `json:"started_at"`
	// Running is true while no end is recorded (or the server stopped
	// before the command ended).
	Running    bool       `json:"running"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// Ended: its user closed it while it ran (a terminal's window): a
	// session's end, not a failure. ExitCode and Signal still say how the
	// process went.
	Ended       bool   `json:"ended,omitempty"`
	ExitCode    *int   `json:"exit_code,omitempty"`
	Signal      string `json:"signal,omitempty"`
	TimedOut    bool   `json:"timed_out,omitempty"`
	DurationMS  int64  `json:"duration_ms"`
	Error       string `json:"error,omitempty"`
	Stdout      string `json:"stdout"`
	Stderr      string `json:"stderr"`
	StdoutBytes int64  `json:"stdout_bytes"`
	StderrBytes int64  `json:"stderr_bytes"`
	// OutputWithheld: the sandbox holds secrets, whose values a command
	// may print, so its output is shown live but never stored.
	OutputWithheld bool `json:"output_withheld,omitempty"`
}

// SandboxExecPage is a page of a sandbox's exec history, newest first.
// NextBefore, when not 0, is the cursor of the next (older) page.
type SandboxExecPage struct {
	Items      []SandboxExecEntry `json:"items"`
	NextBefore int64              `json:"next_before,omitempty"`
}
