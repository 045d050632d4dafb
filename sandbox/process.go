package sandbox

import "io"

// ProcessHooks is a command run by a driver other than the Manager (the
// kubernetes driver, say), for NewProcess.
type ProcessHooks struct {
	// Stdout and Stderr stream the command's output; Close on the Process
	// closes them.
	Stdout, Stderr io.ReadCloser
	// Pid is the command's pid where the driver knows it, else 0.
	Pid int
	// Wait blocks until the command ends; its error is non-nil only when
	// the command's fate is unknown (the sandbox went away). Required.
	Wait func() (ExitResult, error)
	// Kill kills the command. Required.
	Kill func() error
	// Resize resizes the command's terminal, for a driver that runs PTY
	// commands on a terminal of its own (rows and cols already checked);
	// nil when PTYResizeCommand does it.
	Resize func(rows, cols int) error
}

// NewProcess returns a Process that drives h, so that every driver's
// Exec returns the same type. Wait is called once, in the background.
func NewProcess(h ProcessHooks) *Process {
	p := &Process{stdout: h.Stdout, stderr: h.Stderr, pid: h.Pid, kill: h.Kill, resize: h.Resize, done: make(chan struct{})}
	go func() {
		res, err := h.Wait()
		p.mu.Lock()
		p.res, p.err, p.ended = res, err, true
		p.mu.Unlock()
		close(p.done)
	}()
	return p
}
