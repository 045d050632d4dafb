package agents

import (
	"context"

	"github.com/bullpen-hq/bullpen"
)

// Warmer is what a Sandboxes may also do: get an agent's workspace running
// (starting it when it was stopped for idleness, creating it on the
// agent's first turn) ahead of its first use. Workspaces does.
type Warmer interface {
	Warm(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec) error
}

// sandboxTools are the tools that run in the agent's workspace.
var sandboxTools = []string{bullpen.ToolSandboxExec, bullpen.ToolSandboxReadFile, bullpen.ToolSandboxWriteFile, bullpen.ToolSandboxListFiles}

// needsSandbox says whether a built-in turn will likely use the agent's
// workspace: when the role is offered a sandbox tool. An agent CLI's turn
// is left out: CLISandboxes ensures its workspace with the CLI's own
// mounts, bridge and limits, which a plain warm-up would create it
// without on the agent's first turn.
func needsSandbox(e *turnEnv) bool {
	if isCLI(e.role) {
		return false
	}
	for _, name := range sandboxTools {
		if e.tools[name] != nil {
			return true
		}
	}
	return false
}

// warmSandbox starts the agent's workspace in the background as the turn
// begins, so that a workspace stopped for idleness boots while the prompt
// is built and the model thinks, rather than after, on the first tool
// call. The tool call still ensures the workspace itself (a failed warm-up
// is only logged: the call reports its own error), and a start already
// under way is waited for, never repeated. The warm-up runs on the
// service's context, not the turn's: a turn that ends first must not
// cancel a start half done.
func (s *turnLoop) warmSandbox(e *turnEnv) {
	w, ok := s.cfg.Sandboxes.(Warmer)
	if !ok || !needsSandbox(e) {
		return
	}
	agent, spec, log := e.agent, e.role.Sandbox, e.log
	s.life.spawn(func(ctx context.Context) {
		if err := w.Warm(ctx, agent, spec); err != nil && ctx.Err() == nil {
			log.Warn("agents: warm up the sandbox", "err", err)
		}
	})
}
