package agents

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/runtime"
	"github.com/bullpen-hq/bullpen/store"
)

// Journal key of a CLI turn: "c" is noted before the CLI starts. A CLI run
// cannot be resumed half-way and may have done things (commands, posts
// through MCP) the journal never saw, so a re-run of the turn after a
// crash that finds "c" does not start the CLI again: it says so in the
// channel and ends the turn failed. Office effects the CLI made through
// MCP are recorded by the MCP endpoint like any tool call.
const cliStartedKey = "c"

// cliInterrupted is the notice for a CLI run a server restart cut off.
const cliInterrupted = "@%s's %s run was interrupted by a server restart. It was not started again, as it may have partly run: check its effects, then mention @%s again."

// isCLI reports whether the role runs its turns with an agent CLI.
func isCLI(r bullpen.Role) bool { return r.Runtime != "" && r.Runtime != bullpen.RuntimeBuiltin }

// cliTurn runs a prepared turn with the role's agent CLI, once.
func (s *Service) cliTurn(ctx context.Context, e *turnEnv, triggers []trigger) {
	rt, err := runtime.ForRole(e.role.Runtime, e.role.Command)
	if err != nil {
		s.cliFail(ctx, e, err)
		return
	}
	if e.j.has(cliStartedKey) {
		s.noticeOnce(ctx, e, "ncli", fmt.Sprintf(cliInterrupted, e.agent.Handle, rt.Name(), e.agent.Handle))
		s.cliFinish(ctx, e, bullpen.TurnFailed, "interrupted by a server restart; not run again")
		return
	}
	if s.overLimit(ctx, e) {
		return
	}
	if s.cfg.CLIs == nil || s.cfg.TurnTokens == nil {
		s.cliFail(ctx, e, bullpen.Errorf(bullpen.EUNAVAILABLE, "runtime %s needs the sandbox runtime (run Bullpen as root) and the MCP endpoint", rt.Name()))
		return
	}
	s.attachGateway(e) // the gateway's budget notices go to this turn's thread
	run, plan, token, err := s.cliPrepare(ctx, e, rt, triggers)
	if token != "" {
		// The token dies with the turn, whatever happens (a fresh context:
		// ctx may be the shutdown's).
		defer s.revokeTurnToken(e)
	}
	if err != nil {
		if ctx.Err() == nil {
			s.cliFail(ctx, e, err)
		}
		return
	}
	if a, ok := rt.(runtime.ACP); ok {
		s.acpRun(ctx, e, a, run, token)
		return
	}
	s.cliRun(ctx, e, rt, run, plan, streamDriver(rt))
}

// cliPrepare installs the CLI if needed, mints the turn's token and builds
// the run: a one-shot run of the CLI, and the plan of a run attached to
// the agent's CLI server for a CLI that has one (nil otherwise).
func (s *Service) cliPrepare(ctx context.Context, e *turnEnv, rt runtime.Runtime, triggers []trigger) (bullpen.CLIRun, *serverPlan, string, error) {
	if err := s.cfg.CLIs.EnsureCLI(ctx, rt); err != nil {
		return bullpen.CLIRun{}, nil, "", err
	}
	ttl := max(e.deadline.Sub(s.cfg.Now()), time.Second) // overLimit caught a passed deadline
	token, err := s.cfg.TurnTokens.MintTurnToken(ctx, e.agent.ID, e.turn.ID, ttl)
	if err != nil {
		return bullpen.CLIRun{}, nil, "", err
	}
	var packet string
	if !e.j.get("k", &packet) {
		packet = s.workPacket(ctx, e, triggers)
	}
	session := ""
	if e.role.Resume && rt.Resumable() {
		if session, err = s.db.CLISession(ctx, e.agent.ID, rt.Name()); err != nil {
			return bullpen.CLIRun{}, nil, token, err
		}
	}
	roster, err := s.roster(ctx, &e.channel)
	if err != nil {
		return bullpen.CLIRun{}, nil, token, err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(bullpen.CLIBridgePort)
	t := runtime.Turn{CLIDir: bullpen.CLIMountDir + "/" + rt.Install().Dir(), Workdir: bullpen.CLIWorkdir,
		Home: bullpen.CLIHomes + "/" + rt.Name(), Model: e.role.Model, Provider: e.kind, Brief: cliBrief(e.role, e.agent, roster),
		GatewayURL: base, MCPURL: base + "/mcp", Token: token, Session: session, Keep: e.role.Resume,
		MaxTurns: e.role.Budgets.MaxSteps}
	inv := rt.Command(t)
	var plan *serverPlan
	if srt, ok := rt.(runtime.Server); ok && s.cfg.CLILender != nil {
		plan = &serverPlan{rt: srt, turn: t, stdin: packet}
	}
	run := bullpen.CLIRun{Argv: inv.Argv, Env: inv.Env, Dirs: append([]string{bullpen.CLIHomes + "/" + rt.Name()}, inv.Dirs...),
		Stdin: inv.PromptPrefix + packet, Timeout: ttl}
	_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
		if err := e.notePacket(tx, packet); err != nil {
			return err
		}
		return e.j.note(tx, cliStartedKey, struct{}{})
	})
	return run, plan, token, err
}

// installCLI starts installing a hired role's CLI in the background, so
// that its first turn need not wait for npm (a turn still waits for an
// install in progress, and reports a failed one).
func (s *Service) installCLI(role bullpen.Role) {
	rt, err := runtime.ForRole(role.Runtime, role.Command)
	if !isCLI(role) || err != nil || s.cfg.CLIs == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		if err := s.cfg.CLIs.EnsureCLI(ctx, rt); err != nil {
			s.cfg.Logger.Warn("agents: install agent CLI", "runtime", rt.Name(), "err", err)
		}
	}()
}

// cliBrief is the office brief appended to the CLI's own system prompt:
// the role prompt and the office rules, with the tools named as the CLI
// sees Bullpen's MCP server.
func cliBrief(role bullpen.Role, me bullpen.Member, roster string) string {
	p := prefix(role, me, roster)
	return p + "\n## Your tools here\nYou run inside your own sandbox; your workspace persists between turns. " +
		"The office is reached only through the " + runtime.MCPServer + " MCP server: reply with its post_message tool, " +
		"which is how anyone sees your answer.\n"
}

// cliFail ends the turn failed with a visible notice naming the cause,
// unless the gateway refused the CLI a model call for a budget: the
// channel has that notice, and finish ends the turn as limited.
func (s *Service) cliFail(ctx context.Context, e *turnEnv, err error) {
	if e.cut(err) {
		return // a database outage: the turn is re-driven when it answers
	}
	if s.gatewayStopped(e.turn.ID) {
		s.cliFinish(ctx, e, bullpen.TurnFailed, bullpen.ErrorMessage(err))
		return
	}
	s.noticeOnce(ctx, e, "nf", fmt.Sprintf("@%s could not answer: %s", e.agent.Handle, bullpen.ErrorMessage(err)))
	s.cliFinish(ctx, e, bullpen.TurnFailed, bullpen.ErrorMessage(err))
}

// cliFinish stores the turn's outcome.
func (s *Service) cliFinish(ctx context.Context, e *turnEnv, state, errMsg string) {
	if err := s.finish(ctx, e, state, bullpen.WakeDone, errMsg); err != nil && ctx.Err() == nil {
		e.log.Error("agents: finish cli turn", "err", err)
	}
}

// gatewayStopped reports whether the gateway stopped the turn for a budget.
func (s *Service) gatewayStopped(turnID int64) bool {
	stopped := false
	s.gw.with(turnID, func(t *gatewayTurn) { stopped = t.stop.Limit != "" })
	return stopped
}

// revokeTurnToken kills the turn's token on a context of its own.
func (s *Service) revokeTurnToken(e *turnEnv) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.cfg.TurnTokens.RevokeTurnTokens(ctx, e.turn.ID); err != nil {
		e.log.Error("agents: revoke turn token", "err", err)
	}
}

// clipStderr keeps the end of a CLI's stderr, where errors are.
func clipStderr(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "(no output on stderr)"
	}
	return clipTail(s, 600)
}
