package acp

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/bullpen-hq/bullpen"
)

// fsTimeout bounds one fs/* request's command in the sandbox.
const fsTimeout = time.Minute

// maxFile bounds a file read or written through fs/*.
const maxFile = 8 << 20

// writeScript writes stdin to $1, making its directory: run by sh inside
// the sandbox, so the path means what it means to the agent.
const writeScript = `mkdir -p -- "$(dirname -- "$1")" && cat > "$1"`

// ReadTextFile reads a file inside the sandbox, as the sandbox user.
func (c *client) ReadTextFile(ctx context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	out, err := c.runIn(ctx, []string{"cat", "--", p.Path}, nil)
	if err != nil {
		return sdk.ReadTextFileResponse{}, err
	}
	return sdk.ReadTextFileResponse{Content: lines(out, p.Line, p.Limit)}, nil
}

// WriteTextFile writes a file inside the sandbox, as the sandbox user.
func (c *client) WriteTextFile(ctx context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	if len(p.Content) > maxFile {
		return sdk.WriteTextFileResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("content is over %d MiB", maxFile>>20)})
	}
	_, err := c.runIn(ctx, []string{"sh", "-c", writeScript, "sh", p.Path}, strings.NewReader(p.Content))
	return sdk.WriteTextFileResponse{}, err
}

// runIn runs a short command in the sandbox and returns its stdout; a
// non-zero exit is an error with its stderr.
func (c *client) runIn(ctx context.Context, argv []string, stdin io.Reader) (string, error) {
	if c.t.Sandbox == nil {
		return "", sdk.NewInternalError(map[string]any{"error": "no sandbox"})
	}
	ctx, cancel := context.WithTimeout(ctx, fsTimeout)
	defer cancel()
	run := bullpen.CLIRun{Argv: argv, Timeout: fsTimeout, Input: stdin}
	if stdin == nil {
		run.Input = strings.NewReader("")
	}
	p, err := c.t.Sandbox.Start(ctx, run)
	if err != nil {
		return "", sdk.NewInternalError(map[string]any{"error": bullpen.ErrorMessage(err)})
	}
	defer p.Close()
	var out, errb capped
	out.max, errb.max = maxFile, 4<<10
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _, _ = io.Copy(&errb, p.Stderr()) }()
	_, _ = io.Copy(&out, p.Stdout())
	wg.Wait()
	exit, err := p.Wait()
	switch {
	case err != nil:
		return "", sdk.NewInternalError(map[string]any{"error": err.Error()})
	case exit.Code != 0 || exit.Signal != "" || exit.TimedOut:
		return "", sdk.NewInvalidParams(map[string]any{"error": strings.TrimSpace(errb.String())})
	case out.over:
		return "", sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("the file is over %d MiB", maxFile>>20)})
	}
	return out.String(), nil
}

// lines cuts text to limit lines from line (1-based), as fs/read_text_file
// asks.
func lines(text string, line, limit *int) string {
	if line == nil && limit == nil {
		return text
	}
	ls := strings.SplitAfter(text, "\n")
	from := 0
	if line != nil && *line > 1 {
		from = min(*line-1, len(ls))
	}
	to := len(ls)
	if limit != nil && *limit >= 0 {
		to = min(from+*limit, len(ls))
	}
	return strings.Join(ls[from:to], "")
}

// terminals are the commands the agent started with terminal/create.
type terminals struct {
	sb   Sandbox
	mu   sync.Mutex
	n    int
	byID map[string]*terminal
}

func newTerminals(sb Sandbox) *terminals { return &terminals{sb: sb, byID: map[string]*terminal{}} }

// terminal is one command running in the sandbox.
type terminal struct {
	p    bullpen.CLIProcess
	out  capped // its stdout and stderr, the newest bytes kept
	done chan struct{}
	exit bullpen.CLIExit
}

// terminalTimeout bounds a terminal command; the turn's end kills it
// sooner.
const terminalTimeout = time.Hour

// defaultOutputLimit is a terminal's output kept without outputByteLimit.
const defaultOutputLimit = 1 << 20

// CreateTerminal starts a command in the sandbox, as the sandbox user.
func (c *client) CreateTerminal(ctx context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return c.terms.create(p)
}

func (ts *terminals) create(p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	if ts.sb == nil {
		return sdk.CreateTerminalResponse{}, sdk.NewInternalError(map[string]any{"error": "no sandbox"})
	}
	argv := append([]string{p.Command}, p.Args...)
	if len(p.Args) == 0 {
		argv = []string{"sh", "-c", p.Command} // a command line
	}
	if p.Cwd != nil && *p.Cwd != "" {
		argv = append([]string{"sh", "-c", `cd -- "$1" && shift && exec "$@"`, "sh", *p.Cwd}, argv...)
	}
	env := map[string]string{}
	for _, e := range p.Env {
		env[e.Name] = e.Value
	}
	t := &terminal{done: make(chan struct{})}
	t.out.max, t.out.tail = defaultOutputLimit, true
	if p.OutputByteLimit != nil && *p.OutputByteLimit >= 0 {
		t.out.max = *p.OutputByteLimit
	}
	// The command lives until terminal/release or the turn's end
	// (closeAll), not the request's context.
	proc, err := ts.sb.Start(context.Background(), bullpen.CLIRun{Argv: argv, Env: env, Timeout: terminalTimeout, Input: strings.NewReader("")})
	if err != nil {
		return sdk.CreateTerminalResponse{}, sdk.NewInternalError(map[string]any{"error": bullpen.ErrorMessage(err)})
	}
	t.p = proc
	go t.run()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.n++
	id := "term-" + strconv.Itoa(ts.n)
	ts.byID[id] = t
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

// run collects the command's output until it exits.
func (t *terminal) run() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, _ = io.Copy(&t.out, t.p.Stdout()) }()
	go func() { defer wg.Done(); _, _ = io.Copy(&t.out, t.p.Stderr()) }()
	wg.Wait()
	t.exit, _ = t.p.Wait()
	close(t.done)
}

func (t *terminal) status() *sdk.TerminalExitStatus {
	select {
	case <-t.done:
	default:
		return nil
	}
	st := &sdk.TerminalExitStatus{}
	if t.exit.Signal != "" {
		sig := t.exit.Signal
		st.Signal = &sig
	} else {
		code := t.exit.Code
		st.ExitCode = &code
	}
	return st
}

func (ts *terminals) get(id string) (*terminal, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.byID[id]
	if !ok {
		return nil, sdk.NewInvalidParams(map[string]any{"error": "no terminal " + strconv.Quote(id)})
	}
	return t, nil
}

// output is a terminal's output so far ("" for an unknown one).
func (ts *terminals) output(id string) string {
	t, err := ts.get(id)
	if err != nil {
		return ""
	}
	return t.out.String()
}

// TerminalOutput returns a terminal's output and, once it exited, how.
func (c *client) TerminalOutput(ctx context.Context, p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	t, err := c.terms.get(p.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	out, cut := t.out.snapshot()
	return sdk.TerminalOutputResponse{Output: out, Truncated: cut, ExitStatus: t.status()}, nil
}

// WaitForTerminalExit waits for a terminal's command to exit.
func (c *client) WaitForTerminalExit(ctx context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	t, err := c.terms.get(p.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
	st := t.status()
	return sdk.WaitForTerminalExitResponse{ExitCode: st.ExitCode, Signal: st.Signal}, nil
}

// KillTerminal kills a terminal's command (its whole tree) and keeps its
// output.
func (c *client) KillTerminal(ctx context.Context, p sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	t, err := c.terms.get(p.TerminalId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	_ = t.p.Close()
	return sdk.KillTerminalResponse{}, nil
}

// ReleaseTerminal kills a terminal's command and forgets it.
func (c *client) ReleaseTerminal(ctx context.Context, p sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	t, err := c.terms.get(p.TerminalId)
	if err != nil {
		return sdk.ReleaseTerminalResponse{}, err
	}
	_ = t.p.Close()
	c.terms.mu.Lock()
	delete(c.terms.byID, p.TerminalId)
	c.terms.mu.Unlock()
	return sdk.ReleaseTerminalResponse{}, nil
}

// closeAll kills every terminal at the turn's end.
func (ts *terminals) closeAll() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for id, t := range ts.byID {
		_ = t.p.Close()
		delete(ts.byID, id)
	}
}

// capped keeps up to max bytes: the first ones, or with tail the newest
// ones (a terminal's output is truncated from the beginning).
type capped struct {
	mu   sync.Mutex
	b    []byte
	max  int
	tail bool
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b = append(c.b, p...)
	if len(c.b) > c.max {
		c.over = true
		if c.tail {
			c.b = append([]byte(nil), c.b[len(c.b)-c.max:]...)
		} else {
			c.b = c.b[:c.max]
		}
	}
	return len(p), nil
}

func (c *capped) String() string {
	s, _ := c.snapshot()
	return s
}

// snapshot is the text kept (cut at a character boundary) and whether
// some was dropped.
func (c *capped) snapshot() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.b
	if c.over && c.tail {
		for len(b) > 0 && b[0]&0xC0 == 0x80 { // not inside a character
			b = b[1:]
		}
	}
	return string(b), c.over
}
