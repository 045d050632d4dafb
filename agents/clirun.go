package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/runtime"
	"github.com/bullpen-hq/bullpen/store"
)

// cliState is what a CLI run's stream told so far.
type cliState struct {
	final    string
	failed   bool // the CLI's final event reported an error
	posted   bool // it posted through Bullpen's post_message
	session  string
	tools    map[string]bullpen.ToolCall // running tool calls by the CLI's call id
	mcp      map[string]string           // Bullpen MCP calls by call id: their tool
	seq      int
	parseErr error
	// reaped: the run was killed after its final result, having not
	// exited within cliExitGrace (its outcome is the result's).
	reaped atomic.Bool
}

// cliExitGrace is how long a CLI may take to exit after printing its
// final result: Codex stayed 5–6 s (shutting its MCP client down) with
// nothing left to do for the turn, which kept the agent busy.
const cliExitGrace = 1500 * time.Millisecond

// cliDriver reads one run: it hands each event to emit until the run's
// final result, and fails when the run broke its protocol. spec is the
// sandbox the run is in.
type cliDriver func(ctx context.Context, spec bullpen.SandboxSpec, p bullpen.CLIProcess, emit func(runtime.Event)) error

// streamDriver reads a CLI's JSON stream with its parser.
func streamDriver(rt runtime.Runtime) cliDriver {
	return func(_ context.Context, _ bullpen.SandboxSpec, p bullpen.CLIProcess, emit func(runtime.Event)) error {
		return runtime.Read(p.Stdout(), rt.NewParser(), emit)
	}
}

// cliRun starts the CLI, turns its stream into events and ends the turn.
// With a plan, the run is a client of the agent's CLI server (started
// if need be), or the one-shot run when the server cannot serve.
func (s *Service) cliRun(ctx context.Context, e *turnEnv, rt runtime.Runtime, run bullpen.CLIRun, plan *serverPlan, drive cliDriver) {
	s.setStatus(e.agent.ID, bullpen.AgentStatus{State: bullpen.StatusThinking, TurnID: e.turn.ID})
	// The run's context ends at the deadline, when the service stops, and
	// when the gateway refuses the turn a call for its budget (stopRun):
	// the sandbox then kills the CLI's whole process tree.
	cctx, cancel := context.WithDeadline(ctx, e.deadline)
	defer cancel()
	s.gw.with(e.turn.ID, func(t *gatewayTurn) { t.stopRun = cancel })
	spec, err := s.cliSandbox(ctx, e, rt.Name())
	if err != nil {
		s.cliFail(ctx, e, err)
		return
	}
	var attached *serverTurn
	if plan != nil {
		if run, attached, err = s.cliAttach(cctx, e, spec, plan, run); err != nil {
			e.log.Warn("agents: the CLI server cannot serve this turn; running the CLI once", "runtime", rt.Name(), "err", err)
		}
	}
	clean := false
	defer func() { attached.end(clean) }()
	p, err := s.cfg.CLIs.RunCLI(cctx, e.agent, spec, run)
	if err != nil {
		if ctx.Err() == nil {
			s.cliFail(ctx, e, err)
		}
		return
	}
	defer p.Close()
	st := &cliState{tools: map[string]bullpen.ToolCall{}, mcp: map[string]string{}}
	stderr := &tailBuffer{max: 16 << 10}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(stderr, p.Stderr())
	}()
	var reap *time.Timer
	st.parseErr = drive(cctx, spec, p, func(ev runtime.Event) {
		s.cliEvent(ctx, e, st, ev)
		if ev.Kind == runtime.KindFinal && reap == nil {
			reap = time.AfterFunc(cliExitGrace, func() { st.reaped.Store(true); _ = p.Close() })
		}
	})
	if st.parseErr != nil && !st.reaped.Load() {
		_ = p.Close() // garbage: the run is not trusted any further
	}
	exit, werr := p.Wait()
	if reap != nil {
		reap.Stop()
	}
	if st.reaped.Load() {
		// Killed for lingering after its result, which was read whole:
		// the cut-off output and the kill are ours, not the CLI's fault.
		st.parseErr, exit, werr = nil, bullpen.CLIExit{}, nil
	}
	wg.Wait()
	s.closeCLITools(ctx, e, st)
	if ctx.Err() != nil {
		return // shutting down: the restart finds "c" and says so
	}
	clean = s.cliOutcome(ctx, e, rt, st, exit, werr, stderr.String())
}

// cliOutcome ends the turn from how the run ended; it reports whether the
// run ended cleanly.
func (s *Service) cliOutcome(ctx context.Context, e *turnEnv, rt runtime.Runtime, st *cliState, exit bullpen.CLIExit, werr error, stderr string) bool {
	name := rt.Name()
	switch {
	case s.gatewayStopped(e.turn.ID):
		// The budget's notice is posted; finish ends the turn as limited.
		s.cliFinish(ctx, e, bullpen.TurnFailed, fmt.Sprintf("%s was stopped by its token budget", name))
	case exit.TimedOut || !s.cfg.Now().Before(e.deadline):
		s.limit(ctx, e, bullpen.LimitDeadline, fmt.Sprintf("@%s stopped: its %s run used the whole turn deadline of %s and was killed with everything it started.",
			e.agent.Handle, name, time.Duration(e.timeouts.Turn)))
	case werr != nil:
		s.cliFail(ctx, e, werr)
	case st.parseErr != nil && exit.Code == 0:
		s.cliFail(ctx, e, st.parseErr)
	case exit.Code != 0:
		how := fmt.Sprintf("exited with status %d", exit.Code)
		if exit.Signal != "" {
			how = "was killed by signal " + exit.Signal
		}
		detail := clipStderr(stderr)
		switch {
		case st.failed && st.final != "":
			detail = clip(st.final, 600) // the CLI's own account
		case strings.TrimSpace(stderr) == "" && st.parseErr != nil:
			detail = bullpen.ErrorMessage(st.parseErr)
		}
		s.cliFail(ctx, e, bullpen.Errorf(bullpen.EUNAVAILABLE, "%s %s: %s", name, how, detail))
	case st.failed:
		s.cliFail(ctx, e, bullpen.Errorf(bullpen.EUNAVAILABLE, "%s", clip(st.final, 600)))
	default:
		s.cliDone(ctx, e, rt, st)
		return true
	}
	return false
}

// cliDone ends a good run: the session is kept for resume, and a final
// answer the CLI did not post is posted for it, as the builtin loop does.
func (s *Service) cliDone(ctx context.Context, e *turnEnv, rt runtime.Runtime, st *cliState) {
	if st.session != "" && e.role.Resume {
		if _, err := s.db.Transact(ctx, func(tx *store.Tx) error {
			return tx.SaveCLISession(e.agent.ID, rt.Name(), st.session, e.turn.ID)
		}); err != nil {
			e.log.Error("agents: save cli session", "err", err)
		}
	}
	if !st.posted && strings.TrimSpace(st.final) != "" {
		s.postText(ctx, e, "pcli", st.final)
	}
	s.cliFinish(ctx, e, bullpen.TurnDone, "")
}

// cliEvent turns one parsed event into Bullpen's: tool calls are recorded
// and shown like built-in ones (except Bullpen's own MCP tools, which the
// MCP endpoint records itself), text streams as ephemeral deltas.
func (s *Service) cliEvent(ctx context.Context, e *turnEnv, st *cliState, ev runtime.Event) {
	switch ev.Kind {
	case runtime.KindSession:
		st.session = ev.Session
	case runtime.KindDelta:
		s.publishDelta(e, ev.Text)
	case runtime.KindFinal:
		st.final, st.failed = ev.Text, ev.IsError
	case runtime.KindToolStart:
		if ev.Class == runtime.ClassMCP && strings.HasPrefix(ev.Tool, "mcp__"+runtime.MCPServer+"__") {
			st.mcp[ev.CallID] = strings.TrimPrefix(ev.Tool, "mcp__"+runtime.MCPServer+"__")
			return
		}
		st.seq++
		args := ev.Input
		if !json.Valid(args) {
			args, _ = json.Marshal(string(args))
		}
		rec, err := s.toolStarted(ctx, e, llm.ToolCall{ID: ev.CallID, Name: ev.Tool}, args, fmt.Sprintf("x%d", st.seq), false)
		if err == nil {
			st.tools[ev.CallID] = rec
		}
		s.setStatus(e.agent.ID, bullpen.AgentStatus{State: bullpen.StatusTool, TurnID: e.turn.ID, Tool: ev.Tool})
	case runtime.KindToolEnd:
		if st.mcp[ev.CallID] == bullpen.ToolPostMessage && !ev.IsError {
			st.posted = true
		}
		s.cliToolEnd(ctx, e, st, ev)
	}
}

func (s *Service) cliToolEnd(ctx context.Context, e *turnEnv, st *cliState, ev runtime.Event) {
	rec, ok := st.tools[ev.CallID]
	if !ok {
		return
	}
	delete(st.tools, ev.CallID)
	state := "ok"
	if ev.IsError {
		state = "error"
	}
	rec.State, rec.Result = state, clip(ev.Output, 4000)
	rec.DurationMS = s.cfg.Now().Sub(rec.StartedAt).Milliseconds()
	if ev.Took > 0 { // the CLI's own measure: its start and end may arrive together
		rec.DurationMS = ev.Took.Milliseconds()
	}
	s.toolFinished(ctx, e, rec, "x"+rec.CallID, toolOutcome{Out: rec.Result, State: state})
}

// closeCLITools ends tool calls the run left open (killed mid-command).
func (s *Service) closeCLITools(ctx context.Context, e *turnEnv, st *cliState) {
	for id := range st.tools {
		s.cliToolEnd(ctx, e, st, runtime.Event{CallID: id, IsError: true, Output: "the CLI run ended before this call finished"})
	}
}

// publishDelta sends streamed text as an ephemeral event.
func (s *Service) publishDelta(e *turnEnv, text string) {
	body, _ := json.Marshal(bullpen.DeltaEvent{TurnID: e.turn.ID, AgentID: e.agent.ID, Text: text})
	s.off.Hub().PublishEphemeral(bullpen.Event{Type: bullpen.EventAgentDelta, ChannelID: e.channel.ID, Audience: e.aud,
		Payload: body, At: s.cfg.Now().UTC()})
}

// tailBuffer keeps the last max bytes written to it: a CLI's errors are
// at the end of its stderr.
type tailBuffer struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
