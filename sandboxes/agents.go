package sandboxes

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/store"
)

// DefaultAgentIdle is how long an agent's workspace may sit idle before it
// is stopped (its files are kept; the agent's next turn that uses it
// starts it again, see Warm).
const DefaultAgentIdle = 10 * time.Minute

// Bounds of what one command puts into a model's context: the start and
// the end of each stream (errors are usually at the end), never the whole.
const (
	agentStdoutHead, agentStdoutTail = 2 << 10, 5 << 10
	agentStderrHead, agentStderrTail = 1 << 10, 2 << 10
)

// Workspaces gives each agent one persistent sandbox through the Service,
// so agents' sandboxes are named, tagged, owned and restarted exactly as
// Ensure does it. It satisfies agents.Sandboxes and agents.Warmer
// (implements_test.go checks).
type Workspaces struct {
	s    *Service
	idle time.Duration
}

// Workspaces returns the agents' view of the Service. A workspace idle for
// idle (0: DefaultAgentIdle) is stopped and started again on next use.
func (s *Service) Workspaces(idle time.Duration) *Workspaces {
	if idle <= 0 {
		idle = DefaultAgentIdle
	}
	return &Workspaces{s: s, idle: idle}
}

// specOf turns a role's sandbox spec into a sandbox spec.
func (w *Workspaces) specOf(rs bullpen.SandboxSpec) (sandbox.Spec, error) {
	sp := sandbox.Spec{Image: rs.Image, CPU: rs.CPU, IdleTimeout: w.idle, IdleAction: sandbox.IdleStop}
	if rs.Memory != "" {
		n, err := bullpen.ParseBytes(rs.Memory)
		if err != nil {
			return sp, bullpen.Errorf(bullpen.EINVALID, "role sandbox memory %q: %v", rs.Memory, err)
		}
		sp.MemoryBytes = n
	}
	switch rs.Network {
	case bullpen.NetworkOpen:
		sp.Network.Allow = []string{"0.0.0.0/0"}
	case bullpen.NetworkAllowlist:
		for _, x := range rs.Allow {
			if _, _, err := net.ParseCIDR(x); err == nil {
				sp.Network.Allow = append(sp.Network.Allow, x)
			} else {
				sp.Network.Domains = append(sp.Network.Domains, x)
			}
		}
	}
	return sp, nil
}

// ensure returns the agent's running workspace id.
func (w *Workspaces) ensure(ctx context.Context, agent bullpen.Member, rs bullpen.SandboxSpec) (string, error) {
	sp, err := w.specOf(rs)
	if err != nil {
		return "", err
	}
	in, err := w.s.Ensure(ctx, agent, sp)
	if err != nil {
		return "", err
	}
	return in.ID, nil
}

// Warm gets the agent's workspace running ahead of its first use: the
// agents runtime calls it as a turn begins, so a workspace stopped for
// idleness boots while the model thinks (see agents.Warmer).
func (w *Workspaces) Warm(ctx context.Context, agent bullpen.Member, rs bullpen.SandboxSpec) error {
	_, err := w.ensure(ctx, agent, rs)
	return err
}

// retry runs fn on the agent's workspace, once more after a conflict: the
// idle timer may stop the workspace between Ensure and fn.
func (w *Workspaces) retry(ctx context.Context, agent bullpen.Member, rs bullpen.SandboxSpec, fn func(id string) error) error {
	for attempt := 0; ; attempt++ {
		id, err := w.ensure(ctx, agent, rs)
		if err != nil {
			return err
		}
		err = fn(id)
		if attempt > 0 || !bullpen.IsCode(err, bullpen.ECONFLICT) {
			return err
		}
	}
}

// Exec runs a command with /bin/sh -c in the agent's workspace. Only the
// head and tail of each stream are kept, so a flood of output costs
// neither server memory nor model context. A command is started at most
// once: only a failure to start it is retried.
func (w *Workspaces) Exec(ctx context.Context, agent bullpen.Member, rs bullpen.SandboxSpec, req bullpen.WorkspaceExec) (bullpen.WorkspaceResult, error) {
	var e *Exec
	err := w.retry(ctx, agent, rs, func(id string) error {
		var err error
		e, err = w.s.start(ctx, agent, id, sandbox.ExecRequest{Cmd: []string{"/bin/sh", "-c", req.Command}, Timeout: req.Timeout})
		return err
	})
	if err != nil {
		return bullpen.WorkspaceResult{}, err
	}
	stdout := newHeadTail(agentStdoutHead, agentStdoutTail)
	stderr := newHeadTail(agentStderrHead, agentStderrTail)
	for c := range e.Output() {
		if c.Stream == Stderr {
			stderr.Write(c.Data)
		} else {
			stdout.Write(c.Data)
		}
	}
	res, err := e.Wait()
	if err != nil {
		return bullpen.WorkspaceResult{}, err
	}
	out := bullpen.WorkspaceResult{ExitCode: res.ExitCode, Stdout: stdout.String(), Stderr: stderr.String(),
		Truncated: stdout.Dropped() > 0 || stderr.Dropped() > 0}
	if res.TimedOut {
		out.Stderr += "\n(timed out)"
	}
	return out, ctx.Err()
}

// ReadFile reads at most limit bytes of a file in the agent's workspace.
func (w *Workspaces) ReadFile(ctx context.Context, agent bullpen.Member, rs bullpen.SandboxSpec, path string, limit int64) ([]byte, error) {
	var b []byte
	err := w.retry(ctx, agent, rs, func(id string) error {
		rc, err := w.s.ReadFile(ctx, agent, id, path)
		if err != nil {
			return err
		}
		defer rc.Close()
		b, err = io.ReadAll(io.LimitReader(rc, limit))
		return err
	})
	return b, err
}

// WriteFile creates or replaces a file in the agent's workspace.
func (w *Workspaces) WriteFile(ctx context.Context, agent bullpen.Member, rs bullpen.SandboxSpec, path string, data []byte) error {
	return w.retry(ctx, agent, rs, func(id string) error {
		return w.s.WriteFile(ctx, agent, id, path, bytes.NewReader(data), 0o644)
	})
}

// ListFiles lists a directory of the agent's workspace.
func (w *Workspaces) ListFiles(ctx context.Context, agent bullpen.Member, rs bullpen.SandboxSpec, dir string) ([]bullpen.FileEntry, error) {
	var out []bullpen.FileEntry
	err := w.retry(ctx, agent, rs, func(id string) error {
		fs, err := w.s.ListFiles(ctx, agent, id, dir)
		if err != nil {
			return err
		}
		out = make([]bullpen.FileEntry, len(fs))
		for i, f := range fs {
			out[i] = bullpen.FileEntry{Name: f.Name, Size: f.Size, Dir: f.IsDir}
		}
		return nil
	})
	return out, err
}

// WorkspaceName is the name of an agent's workspace sandbox.
func WorkspaceName(agent bullpen.Member) string { return "agent-" + agent.Handle }

// Ensure returns member's own workspace sandbox (tagged bullpen.SandboxAgentTag and named
// WorkspaceName), creating it from spec when there is none and starting or
// resuming it when it is stopped or paused. It is the one path by which
// each agent gets its persistent sandbox; spec.Name and spec.Tags are
// ignored so every workspace is named and tagged alike.
func (s *Service) Ensure(ctx context.Context, member bullpen.Member, spec sandbox.Spec) (sandbox.Info, error) {
	if member.ID == 0 || member.Handle == "" {
		return sandbox.Info{}, bullpen.Errorf(bullpen.EINVALID, "no member")
	}
	s.createMu.Lock()
	in, found, err := s.findWorkspace(ctx, member)
	if err == nil && !found {
		in, found, err = s.createWorkspace(ctx, member, spec)
	}
	s.createMu.Unlock()
	if err != nil || !found {
		return in, err
	}
	return s.wake(ctx, in)
}

// createWorkspace makes member's workspace unless another replica made it
// first (found). createMu serializes Ensure within this process only;
// replicas that share a database and a driver whose sandboxes they all
// see (the kubernetes driver) may ensure one agent's workspace at once,
// since a turn's warm-up outlives the turn (agents.Warmer) and the next
// turn may run elsewhere. So the create is decided under a database lock
// per agent, after a second look.
func (s *Service) createWorkspace(ctx context.Context, member bullpen.Member, spec sandbox.Spec) (sandbox.Info, bool, error) {
	lock, err := s.lockWorkspace(ctx, member.ID)
	if err != nil {
		return sandbox.Info{}, false, err
	}
	defer lock.Release()
	in, found, err := s.findWorkspace(ctx, member)
	if err != nil || found {
		return in, found, err
	}
	spec.Name, spec.Tags = WorkspaceName(member), nil
	in, err = s.create(ctx, member, spec, map[string]string{bullpen.SandboxAgentTag: "workspace"})
	return in, false, err
}

// workspaceLockBase is the high half of the PostgreSQL advisory lock keys
// that serialize the creation of one agent's workspace across replicas
// (the low half is the agent's member id); the other keys are small
// numbers (7410, 7412, 7413: agents/replicas.go).
const workspaceLockBase = int64(7414) << 32

// lockWorkspace waits for the database lock of memberID's workspace (on
// SQLite, one process, it is held at once).
func (s *Service) lockWorkspace(ctx context.Context, memberID int64) (*store.SessionLock, error) {
	key := workspaceLockBase | memberID&0xffffffff
	for {
		lock, err := s.db.TryLock(ctx, key)
		if err != nil || lock != nil {
			return lock, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("sandboxes: wait for the workspace lock of member %d: %w", memberID, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// findWorkspace finds member's workspace: the one tagged bullpen.SandboxAgentTag, or one
// made before that tag existed (owned by member and named WorkspaceName).
func (s *Service) findWorkspace(ctx context.Context, member bullpen.Member) (sandbox.Info, bool, error) {
	owner := strconv.FormatInt(member.ID, 10)
	found, err := s.m.List(ctx, map[string]string{bullpen.SandboxOwnerTag: owner, bullpen.SandboxAgentTag: "workspace"})
	if err != nil || len(found) > 0 {
		return first(found), len(found) > 0, err
	}
	own, err := s.m.List(ctx, map[string]string{bullpen.SandboxOwnerTag: owner})
	for _, in := range own {
		if bullpen.SandboxName(in.Name, in.Tags) == WorkspaceName(member) {
			return in, true, nil
		}
	}
	return sandbox.Info{}, false, err
}

func first(ins []sandbox.Info) sandbox.Info {
	if len(ins) == 0 {
		return sandbox.Info{}
	}
	return ins[0]
}

// wake starts a stopped sandbox or resumes a paused one. A concurrent
// caller may have woken it first: what counts is that it runs after.
func (s *Service) wake(ctx context.Context, in sandbox.Info) (sandbox.Info, error) {
	var err error
	switch in.State {
	case sandbox.StateStopped:
		err = s.m.Start(ctx, in.ID)
	case sandbox.StatePaused:
		err = s.m.Resume(ctx, in.ID)
	}
	now, gerr := s.m.Get(ctx, in.ID)
	if gerr != nil {
		return sandbox.Info{}, gerr
	}
	if err != nil && now.State != sandbox.StateRunning {
		return sandbox.Info{}, err
	}
	return now, nil
}
