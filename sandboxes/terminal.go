package sandboxes

import (
	"bytes"
	"context"
	"io"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// A command run with a PTY is a terminal session (the dashboard's
// terminal, an E2B PTY). Its user ends it by closing it, and resizes it
// as the window changes; neither is a command anyone ran, so neither
// shows as one in the exec history.

// End ends the command because its user closed it (a terminal's window):
// it is killed as by Close, and the history records that it ended, not
// that it was killed. Only a terminal session ends this way; any other
// command is simply closed.
func (e *Exec) End() {
	if e.pty {
		e.ended.Store(true)
	}
	e.Close()
}

// resizeTimeout bounds the short command that resizes a terminal.
const resizeTimeout = 10 * time.Second

// Resize sets the size of the command's terminal (EINVALID for a command
// without a PTY). The stty that does it runs in the same sandbox through
// the Manager, so it makes no exec event: resizing a window is not a
// command in the history or the timeline.
func (e *Exec) Resize(ctx context.Context, rows, cols int) error {
	if !e.pty {
		return bullpen.Errorf(bullpen.EINVALID, "resize: the command has no PTY (start it with \"pty\")")
	}
	if ok, err := e.p.ResizePTY(rows, cols); ok { // the driver's own terminal
		if err == nil && e.screen != nil {
			e.screen.setWidth(cols)
		}
		return err
	}
	cmd, err := sandbox.PTYResizeCommand(e.Pid(), rows, cols)
	if err != nil {
		return err
	}
	p, err := e.svc.m.Exec(ctx, e.sbID, sandbox.ExecRequest{Cmd: cmd, Timeout: resizeTimeout})
	if err != nil {
		return err
	}
	defer p.Close()
	drained := make(chan struct{})
	go func() { defer close(drained); _, _ = io.Copy(io.Discard, p.Stdout()) }()
	var msg bytes.Buffer
	_, _ = io.Copy(&msg, io.LimitReader(p.Stderr(), 512))
	_, _ = io.Copy(io.Discard, p.Stderr())
	<-drained
	res, err := p.Wait()
	if err == nil && res.Code != 0 {
		err = bullpen.Errorf(bullpen.EUNAVAILABLE, "resize: stty exited with %d: %s", res.Code, strings.TrimSpace(msg.String()))
	}
	if err == nil && e.screen != nil {
		e.screen.setWidth(cols)
	}
	return err
}
