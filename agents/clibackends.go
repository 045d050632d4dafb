package agents

import (
	"context"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/runtime"
)

// CLISandboxes runs agent CLIs in the agents' own sandboxes: the sandbox
// is created or started with the installed CLIs mounted read-only and the
// bridge to Bullpen, and the run is one exec as the sandbox user whose
// whole process tree dies with it. JoinCLIs makes one of package
// sandboxes' runner (Workspaces.WithCLIs) and the CLIs' installer; nil
// makes CLI roles fail with a notice.
type CLISandboxes interface {
	// EnsureCLI installs the runtime's CLI unless it is installed.
	EnsureCLI(ctx context.Context, rt runtime.Runtime) error
	// RunCLI starts one run in the agent's sandbox.
	RunCLI(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec, run bullpen.CLIRun) (bullpen.CLIProcess, error)
}

// CLIRunner runs agent CLIs in the agents' sandboxes
// (sandboxes.CLIWorkspaces).
type CLIRunner interface {
	RunCLI(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec, run bullpen.CLIRun) (bullpen.CLIProcess, error)
}

// CLIInstaller installs an agent CLI where the runner mounts the CLIs
// (*runtime.Installer).
type CLIInstaller interface {
	Ensure(ctx context.Context, rt runtime.Runtime) (string, error)
}

// JoinCLIs makes the CLISandboxes of a runner and an installer.
func JoinCLIs(r CLIRunner, in CLIInstaller) CLISandboxes { return joinedCLIs{r, in} }

type joinedCLIs struct {
	CLIRunner
	in CLIInstaller
}

func (j joinedCLIs) EnsureCLI(ctx context.Context, rt runtime.Runtime) error {
	if rt.Install().Package == "" {
		return nil // an agent of the sandbox image (runtime acp)
	}
	_, err := j.in.Ensure(ctx, rt)
	return err
}

// TurnTokens issues the short-lived credential of one CLI turn, which the
// CLI uses for the MCP endpoint and the model gateway. *office.Office
// provides it.
type TurnTokens interface {
	MintTurnToken(ctx context.Context, agentMemberID, turnID int64, ttl time.Duration) (string, error)
	RevokeTurnTokens(ctx context.Context, turnID int64) error
}
