package agents

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// ToolCLINetwork names the approvals that ask a human for an agent CLI's
// network policy (their Arguments are the policy). A built-in agent's
// sandbox_exec with network asks for each command; an agent CLI runs its
// own commands, which no approval sees, so its whole policy is approved
// once instead: until a human approves the current policy, the CLI's
// sandbox runs with network none. Only humans answer approvals.
const ToolCLINetwork = "cli_network"

// networkPolicy is a role's network policy as a human approves it: ""
// when the sandbox has no network (nothing to approve).
func networkPolicy(rs bullpen.SandboxSpec) string {
	switch rs.Network {
	case "", bullpen.NetworkNone:
		return ""
	case bullpen.NetworkAllowlist:
		allow := slices.Clone(rs.Allow)
		slices.Sort(allow)
		return bullpen.NetworkAllowlist + " " + strings.Join(allow, ", ")
	default:
		return rs.Network
	}
}

// networkView fills an agent view's network approval: the state of its
// current policy, for a CLI agent whose sandbox has network.
func (s *Service) networkView(ctx context.Context, v *bullpen.AgentView) error {
	policy := networkPolicy(v.Spec.Sandbox)
	if !isCLI(v.Spec) || policy == "" {
		return nil
	}
	na, err := s.db.NetworkApproval(ctx, v.ID, policy)
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		na, err = bullpen.NetworkApproval{Policy: policy, State: bullpen.NetworkUnasked}, nil
	}
	if err != nil {
		return err
	}
	v.Network = &na
	return nil
}

// cliSandbox is the sandbox spec a CLI turn runs with: the role's, when
// its network policy is approved; otherwise network none, an approval
// request when none is pending, and a notice in the turn saying so once.
func (s *Service) cliSandbox(ctx context.Context, e *turnEnv, runtime string) (bullpen.SandboxSpec, error) {
	spec := e.role.Sandbox
	policy := networkPolicy(spec)
	if policy == "" {
		return spec, nil
	}
	na, err := s.db.NetworkApproval(ctx, e.agent.ID, policy)
	switch {
	case err == nil && na.State == bullpen.ApprovalApproved:
		return spec, nil
	case bullpen.IsCode(err, bullpen.ENOTFOUND):
		if na, err = s.askNetwork(ctx, e, policy); err != nil {
			return spec, err
		}
	case err != nil:
		return spec, err
	}
	how := fmt.Sprintf("approval #%d is %s", na.ApprovalID, na.State)
	if na.State == bullpen.ApprovalPending {
		how = fmt.Sprintf("a human can answer approval #%d with the buttons on this message", na.ApprovalID)
	}
	s.noticeOnce(ctx, e, "nnet", fmt.Sprintf("@%s's %s runs without network: its sandbox's network policy (%s) is not approved by a human; %s.",
		e.agent.Handle, runtime, policy, how))
	spec.Network, spec.Allow = bullpen.NetworkNone, nil
	return spec, nil
}

// askNetwork stores an approval request for an agent CLI's network
// policy, with its event, in the turn that found it unasked (an agent
// hired before policies were asked at hire).
func (s *Service) askNetwork(ctx context.Context, e *turnEnv, policy string) (bullpen.NetworkApproval, error) {
	var a bullpen.Approval
	_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		a, err = askNetworkTx(tx, bullpen.Approval{AgentID: e.agent.ID, TurnID: e.turn.ID, ChannelID: e.channel.ID,
			ThreadID: e.thread}, e.agent.Handle, policy, e.aud)
		return err
	})
	return bullpen.NetworkApproval{Policy: policy, State: bullpen.ApprovalPending, ApprovalID: a.ID}, err
}

// askNetworkOnHire asks the humans, in the hire's or edit's transaction,
// for the network policy of an agent whose role runs a CLI in a sandbox
// with network: outside any turn and channel, so the approval is there
// before the agent's first turn and shows on its card. Nothing is asked
// for the built-in loop, a sandbox without network, or a policy whose
// approval stands.
func askNetworkOnHire(tx *store.Tx, agent bullpen.Member, r bullpen.Role) error {
	policy := networkPolicy(r.Sandbox)
	if !isCLI(r) || policy == "" {
		return nil
	}
	if _, err := tx.NetworkApproval(agent.ID, policy); err == nil || !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return err
	}
	_, err := askNetworkTx(tx, bullpen.Approval{AgentID: agent.ID}, agent.Handle, policy, nil)
	return err
}

// askNetworkTx stores the approval request a (its agent, and its turn and
// channel when asked in one) for policy, and its event.
func askNetworkTx(tx *store.Tx, a bullpen.Approval, handle, policy string, aud []int64) (bullpen.Approval, error) {
	a.Tool, a.Arguments = ToolCLINetwork, policy
	a.Reason = "the agent CLI's own commands would reach this network unseen (" + policy + ")"
	a, err := tx.CreateApproval(a)
	if err != nil {
		return a, err
	}
	if err := tx.AskNetwork(a.AgentID, policy, a.ID); err != nil {
		return a, err
	}
	_, err = tx.Emit(bullpen.EventApprovalRequested, a.ChannelID, aud, bullpen.ApprovalEvent{Approval: a, Handle: handle})
	return a, err
}
