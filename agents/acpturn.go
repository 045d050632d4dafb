package agents

import (
	"context"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/acp"
	"github.com/bullpen-hq/bullpen/agents/runtime"
)

// acpRun runs a turn of runtime acp: the agent runs in the sandbox like
// any CLI (the same deadline, budget stop, whole-tree kill and outcome),
// but is driven over its stdio by Bullpen's ACP client instead of read as
// a stream. run.Stdin (the brief and work packet) is the prompt.
func (s *Service) acpRun(ctx context.Context, e *turnEnv, a runtime.ACP, run bullpen.CLIRun, token string) {
	prompt := run.Stdin
	in, out := io.Pipe()
	defer out.Close()
	run.Stdin, run.Input = "", in
	mcp := "http://127.0.0.1:" + strconv.Itoa(bullpen.CLIBridgePort) + "/mcp"
	s.cliRun(ctx, e, a, run, nil, func(cctx context.Context, spec bullpen.SandboxSpec, p bullpen.CLIProcess, emit func(runtime.Event)) error {
		err := acp.Run(cctx, out, p.Stdout(), acp.Turn{Cwd: bullpen.CLIWorkdir, Prompt: prompt, MCPURL: mcp, Token: token,
			Sandbox: acpSandbox{s.cfg.CLIs, e.agent, spec}, Permit: acpPermit(e.role), Emit: emit})
		if err != nil && cctx.Err() == nil {
			// The agent closed the connection: let it exit on its own, so
			// the turn reports its exit status rather than our kill.
			awaitExit(p, acpExitGrace)
		}
		return err
	})
}

// acpExitGrace is how long an agent that closed its connection may take
// to exit before the run is killed.
const acpExitGrace = 2 * time.Second

// awaitExit waits up to d for p to end.
func awaitExit(p bullpen.CLIProcess, d time.Duration) {
	done := make(chan struct{})
	go func() {
		_, _ = p.Wait() // Wait may be called again: it returns the same result
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// acpSandbox starts the ACP client's fs/* and terminal/* commands in the
// agent's sandbox, as its user, like the agent itself.
type acpSandbox struct {
	clis  CLISandboxes
	agent bullpen.Member
	spec  bullpen.SandboxSpec
}

func (a acpSandbox) Start(ctx context.Context, run bullpen.CLIRun) (bullpen.CLIProcess, error) {
	return a.clis.RunCLI(ctx, a.agent, a.spec, run)
}

// acpPermit is the role's policy for the agent's permission requests:
// everything runs inside the sandbox, which is the boundary, so requests
// are allowed, except commands (kind execute) when the role says
// sandbox_exec needs a human's approval: no human answers inside a live
// ACP session, so those are refused.
func acpPermit(role bullpen.Role) acp.Permit {
	refuseExec := slices.Contains(role.Approvals, bullpen.ToolSandboxExec)
	return func(_ context.Context, p acp.Permission) (bool, string) {
		if refuseExec && p.Kind == "execute" {
			return false, "the role's approvals include " + bullpen.ToolSandboxExec
		}
		return true, ""
	}
}

// validateCommand checks a role's command: runtime acp needs one (a
// shipped agent or a command line), other runtimes take none.
func validateCommand(r *bullpen.Role, file string) error {
	if r.Runtime != bullpen.RuntimeACP {
		if r.Command != "" {
			return invalid(file, "command", "is for runtime %s only (the ACP agent to run)", bullpen.RuntimeACP)
		}
		return nil
	}
	if _, err := runtime.ParseACP(r.Command); err != nil {
		return invalid(file, "command", "%s", bullpen.ErrorMessage(err))
	}
	if r.Resume {
		return invalid(file, "resume", "runtime %s starts a fresh ACP session every turn", bullpen.RuntimeACP)
	}
	return nil
}
