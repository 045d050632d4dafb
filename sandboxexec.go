package bullpen

import "time"

// SandboxChunk is a piece of a sandbox command's output. Stream is stdout
// or stderr; Offset is where Data starts in its stream. Chunks end on
// UTF-8 character boundaries when the output is text, so each text chunk
// is valid UTF-8 on its own.
type SandboxChunk struct {
	Stream string
	Offset int64
	Data   []byte
}

// SandboxResult is how a sandbox command ended.
type SandboxResult struct {
	ExitCode int
	Signal   string
	TimedOut bool
	Duration time.Duration
}

// SandboxRunResult is the outcome of a command run to its end with its
// output captured.
type SandboxRunResult struct {
	SandboxResult
	Stdout, Stderr []byte
	// StdoutBytes and StderrBytes are how much the command wrote, captured
	// or not.
	StdoutBytes, StderrBytes int64
	// StdoutTruncated and StderrTruncated say that output beyond the
	// limit was read and dropped; Truncated is either.
	StdoutTruncated, StderrTruncated bool
	Truncated                        bool
}

// SandboxCommand is a command running in a sandbox. Read Output until it
// is closed, then Wait; or Close to abandon the output (the command is
// killed).
type SandboxCommand interface {
	// ExecID names the command in its output and logs.
	ExecID() string
	// Output delivers stdout and stderr chunks, each stream in order; it
	// is closed when both streams have ended.
	Output() <-chan SandboxChunk
	// Wait waits for the exit and for the output to be delivered or
	// abandoned.
	Wait() (SandboxResult, error)
	// Kill kills the command's process group.
	Kill() error
	// Close stops delivering output and kills the command if it still runs.
	Close()
}
