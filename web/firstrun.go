package web

import (
	"context"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web/views"
)

// agentStates maps each agent's member ID to its state (active or fired);
// empty when agents are not enabled.
func (s *Server) agentStates(ctx context.Context) (map[int64]string, error) {
	out := map[int64]string{}
	if s.svc.Agents == nil {
		return out, nil
	}
	as, err := s.svc.Agents.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range as {
		out[a.ID] = a.State
	}
	return out, nil
}

// firstRun is the guided empty state of #general while the office is
// new: until an agent is hired and the channel has a message. The lead
// suggested is the starter team's, or the first active agent.
func (s *Server) firstRun(ctx context.Context, me bullpen.Member, p views.DashboardPage, agents map[int64]string) *views.FirstRun {
	if s.svc.Agents == nil || p.Current.Name != bullpen.GeneralChannel {
		return nil
	}
	fr := &views.FirstRun{NeedProvider: !s.svc.Agents.HasProvider(ctx), Admin: me.IsAdmin, Lead: "lead"}
	lead := ""
	for _, m := range p.Members {
		if agents[m.ID] == bullpen.AgentActive {
			fr.HasTeam = true
			if lead == "" || m.Handle == "lead" {
				lead = m.Handle
			}
		}
	}
	if lead != "" {
		fr.Lead = lead
	}
	if fr.HasTeam && len(p.Messages) > 0 {
		return nil
	}
	return fr
}
