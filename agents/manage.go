package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/view"
)

// runtimes an agent edit may choose; "" is the built-in loop.
var runtimes = []string{"", bullpen.RuntimeBuiltin, bullpen.RuntimeClaudeCode, bullpen.RuntimeCodex, bullpen.RuntimeOpenCode}

// Hire adds an agent member with its role; admins only.
func (s *desk) Hire(ctx context.Context, actor bullpen.Member, in bullpen.HireInput) (view.Hired, error) {
	if !actor.IsAdmin {
		return view.Hired{}, bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can hire agents")
	}
	var role bullpen.Role
	switch {
	case in.Spec != nil && in.Role != "":
		return view.Hired{}, bullpen.Errorf(bullpen.EINVALID, "give either role or spec, not both")
	case in.Spec != nil:
		role = *in.Spec
		role.Source = "inline"
	case in.Role != "":
		var err error
		if role, err = s.cat.Role(in.Role); err != nil {
			return view.Hired{}, err
		}
	default:
		return view.Hired{}, bullpen.Errorf(bullpen.EINVALID, "role is required (e.g. \"starter/engineer\"), or an inline spec")
	}
	if in.Handle != "" {
		role.Handle = in.Handle
	}
	if in.Name != "" {
		role.Name = in.Name
	}
	if in.Title != "" {
		role.Title = in.Title
	}
	if err := ValidateRole(&role, ""); err != nil {
		return view.Hired{}, err
	}
	spec, _ := json.Marshal(role)
	m, err := s.off.CreateMemberWith(ctx, actor, bullpen.MemberInput{Handle: role.Handle, DisplayName: role.Name,
		Kind: bullpen.KindAgent, Title: role.Title}, func(tx *store.Tx, m bullpen.Member) error {
		a, err := tx.CreateAgent(bullpen.Agent{MemberID: m.ID, Role: role.Source, Spec: string(spec)})
		if err != nil {
			return err
		}
		if _, err = tx.Emit(bullpen.EventAgentHired, 0, nil, s.view(m, a)); err != nil {
			return err
		}
		return askNetworkOnHire(tx, m, role)
	})
	if err != nil {
		return view.Hired{}, err
	}
	token, _, err := s.off.CreateToken(ctx, actor, m.ID, "agent @"+m.Handle)
	if err != nil {
		return view.Hired{}, err
	}
	s.rt.installCLI(role)
	a, err := s.Get(ctx, m.ID)
	return view.Hired{Agent: a, Token: token}, err
}

// HireTeam hires every role of a pack whose handle is free; it returns the
// agents hired (tokens are not kept: the runtime mints its own).
func (s *desk) HireTeam(ctx context.Context, actor bullpen.Member, pack string) ([]bullpen.AgentView, error) {
	if !actor.IsAdmin {
		return nil, bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can hire agents")
	}
	if pack == "" {
		return nil, bullpen.Errorf(bullpen.EINVALID, "pack is required (e.g. \"starter\")")
	}
	roles := s.cat.Pack(pack)
	if len(roles) == 0 {
		return nil, bullpen.Errorf(bullpen.ENOTFOUND, "no role pack %q", pack)
	}
	var out []bullpen.AgentView
	for _, r := range roles {
		if _, err := s.db.MemberByHandle(ctx, r.Handle); err == nil {
			continue
		}
		h, err := s.Hire(ctx, actor, bullpen.HireInput{Role: r.Source})
		if err != nil {
			return out, err
		}
		out = append(out, h.Agent)
	}
	return out, nil
}

// Update edits an agent; admins only. The next turn uses the new role.
func (s *desk) Update(ctx context.Context, actor bullpen.Member, id int64, up bullpen.AgentUpdate) (bullpen.AgentView, error) {
	if !actor.IsAdmin {
		return bullpen.AgentView{}, bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can edit agents")
	}
	a, err := s.db.Agent(ctx, id)
	if err != nil {
		return bullpen.AgentView{}, err
	}
	var r bullpen.Role
	if err := json.Unmarshal([]byte(a.Spec), &r); err != nil {
		return bullpen.AgentView{}, fmt.Errorf("agents: stored role spec: %w", err)
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&r.Name, up.Name)
	set(&r.Title, up.Title)
	set(&r.Provider, up.Provider)
	set(&r.Model, up.Model)
	set(&r.Prompt, up.Prompt)
	set(&r.Runtime, up.Runtime)
	if !slices.Contains(runtimes, r.Runtime) {
		return bullpen.AgentView{}, bullpen.Errorf(bullpen.EINVALID, "runtime %q is not one of builtin, claude-code, codex, opencode", r.Runtime)
	}
	if up.Provider != nil {
		if err := s.rt.checkProviderName(ctx, r.Provider); err != nil {
			return bullpen.AgentView{}, err
		}
	}
	if up.Tools != nil {
		r.Tools = *up.Tools
	}
	if up.Approvals != nil {
		r.Approvals = *up.Approvals
	}
	if up.Sandbox != nil {
		r.Sandbox = *up.Sandbox
	}
	if up.Budgets != nil {
		r.Budgets = *up.Budgets
	}
	if err := ValidateRole(&r, ""); err != nil {
		return bullpen.AgentView{}, err
	}
	m, err := s.off.UpdateMember(ctx, actor, id, bullpen.MemberUpdate{DisplayName: &r.Name, Title: &r.Title})
	if err != nil {
		return bullpen.AgentView{}, err
	}
	prev, _ := decodeRole(a.Spec)
	spec, _ := json.Marshal(r)
	_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateAgent(id, a.Role, string(spec)); err != nil {
			return err
		}
		if networkPolicy(prev.Sandbox) != networkPolicy(r.Sandbox) {
			// A changed policy voids the approval: a human is asked again.
			if err := tx.ForgetNetwork(id); err != nil {
				return err
			}
		}
		a.Spec = string(spec)
		if _, err := tx.Emit(bullpen.EventAgentUpdated, 0, nil, s.view(m, a)); err != nil {
			return err
		}
		return askNetworkOnHire(tx, m, r)
	})
	if err != nil {
		return bullpen.AgentView{}, err
	}
	return s.Get(ctx, id)
}

// Fire deactivates an agent: it never wakes again, its tokens are revoked
// and its pending wakes dropped. Its messages, turns and pages stay.
func (s *desk) Fire(ctx context.Context, actor bullpen.Member, id int64) (bullpen.AgentView, error) {
	if !actor.IsAdmin {
		return bullpen.AgentView{}, bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can fire agents")
	}
	m, err := s.db.Member(ctx, id)
	if err != nil {
		return bullpen.AgentView{}, err
	}
	_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
		if err := tx.FireAgent(id); err != nil {
			return err
		}
		_, err := tx.Emit(bullpen.EventAgentFired, 0, nil, bullpen.AgentFiredEvent{AgentID: id, Handle: m.Handle})
		return err
	})
	if err != nil {
		return bullpen.AgentView{}, err
	}
	s.creds.drop(id)
	return s.Get(ctx, id)
}

// Get returns one agent.
func (s *desk) Get(ctx context.Context, id int64) (bullpen.AgentView, error) {
	a, err := s.db.Agent(ctx, id)
	if err != nil {
		return bullpen.AgentView{}, err
	}
	m, err := s.db.Member(ctx, id)
	if err != nil {
		return bullpen.AgentView{}, err
	}
	v := s.view(m, a)
	return v, s.rt.networkView(ctx, &v)
}

// List returns every agent, fired ones included, by handle.
func (s *desk) List(ctx context.Context) ([]bullpen.AgentView, error) {
	agents, err := s.db.Agents(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(agents))
	for i, a := range agents {
		ids[i] = a.MemberID
	}
	members, err := s.db.MembersByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]bullpen.AgentView, 0, len(agents))
	for _, a := range agents {
		v := s.view(members[a.MemberID], a)
		if err := s.rt.networkView(ctx, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	sortAgents(out)
	return out, nil
}

func (s *desk) view(m bullpen.Member, a bullpen.Agent) bullpen.AgentView {
	r, _ := decodeRole(a.Spec)
	v := bullpen.AgentView{Member: m, Role: a.Role, State: a.State, Spec: r, Status: s.status.Status(m.ID), HiredAt: a.CreatedAt}
	return v
}

func sortAgents(as []bullpen.AgentView) {
	for i := 1; i < len(as); i++ {
		for j := i; j > 0 && as[j].Handle < as[j-1].Handle; j-- {
			as[j], as[j-1] = as[j-1], as[j]
		}
	}
}

// OpenSession returns the DM channel between actor and an agent: a
// session. Messages in it always wake the agent.
func (s *desk) OpenSession(ctx context.Context, actor bullpen.Member, agentID int64) (bullpen.Channel, error) {
	a, err := s.db.Agent(ctx, agentID)
	if err != nil {
		return bullpen.Channel{}, err
	}
	if a.State != bullpen.AgentActive {
		return bullpen.Channel{}, bullpen.Errorf(bullpen.EINVALID, "agent %d was fired", agentID)
	}
	return s.off.OpenDM(ctx, actor, agentID)
}

// Turns lists an agent's latest turns with token usage and tool calls.
func (s *desk) Turns(ctx context.Context, actor bullpen.Member, agentID int64, limit int) ([]bullpen.Turn, error) {
	if _, err := s.db.Agent(ctx, agentID); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 200 {
		limit = 50
	}
	turns, err := s.db.Turns(ctx, agentID, limit)
	if err != nil {
		return nil, err
	}
	out := turns[:0]
	for _, t := range turns {
		c, err := s.db.Channel(ctx, t.ChannelID)
		if err != nil {
			return nil, err
		}
		if c.Kind != bullpen.ChannelDM || actor.IsAdmin || containsID(c.MemberIDs, actor.ID) {
			out = append(out, t)
		}
	}
	return out, nil
}
