package web

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/gofiber/fiber/v2"
)

// AgentService is what the agent routes need; *agents.Service implements it.
type AgentService interface {
	Roles() []bullpen.RoleInfo
	// HasProvider tells whether agents have a default model provider.
	HasProvider(ctx context.Context) bool
	// RoleProblems lists the role files that failed to load.
	RoleProblems() []bullpen.RoleProblem
	List(ctx context.Context) ([]bullpen.AgentView, error)
	Get(ctx context.Context, id int64) (bullpen.AgentView, error)
	Hire(ctx context.Context, actor bullpen.Member, in bullpen.HireInput) (view.Hired, error)
	// HireTeam hires every role of a pack whose handle is free.
	HireTeam(ctx context.Context, actor bullpen.Member, pack string) ([]bullpen.AgentView, error)
	Update(ctx context.Context, actor bullpen.Member, id int64, up bullpen.AgentUpdate) (bullpen.AgentView, error)
	Fire(ctx context.Context, actor bullpen.Member, id int64) (bullpen.AgentView, error)
	OpenSession(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Channel, error)
	Turns(ctx context.Context, actor bullpen.Member, id int64, limit int) ([]bullpen.Turn, error)
	Approvals(ctx context.Context, actor bullpen.Member, state string) ([]bullpen.Approval, error)
	Answer(ctx context.Context, actor bullpen.Member, id int64, approve bool, note string) (bullpen.Approval, error)
}

// agentRoutes registers the agent API.
func (s *Server) agentRoutes(api fiber.Router) {
	need := func(c *fiber.Ctx) error {
		if s.svc.Agents == nil {
			return bullpen.Errorf(bullpen.EUNAVAILABLE, "agents are not enabled on this server")
		}
		return c.Next()
	}
	api.Get("/roles", need, s.listRoles)
	api.Get("/agents", need, s.listAgents)
	api.Post("/agents", need, s.hireAgent)
	api.Post("/teams", need, s.hireTeam)
	api.Get("/agents/:id", need, s.getAgent)
	api.Patch("/agents/:id", need, s.updateAgent)
	api.Delete("/agents/:id", need, s.fireAgent)
	api.Post("/agents/:id/session", need, s.openSession)
	api.Post("/agents/:id/messages", need, s.postToAgent)
	api.Get("/agents/:id/turns", need, s.listTurns)
	api.Get("/agents/:id/events", need, s.agentEvents)
	api.Get("/approvals", need, s.listApprovals)
	api.Post("/approvals/:id", need, s.answerApproval)
}

// rolesResponse lists the roles one can hire and, beside them, the role
// files that failed to load, so a typo shows where people look.
type rolesResponse struct {
	Items  []bullpen.RoleInfo    `json:"items"`
	Errors []bullpen.RoleProblem `json:"errors"`
}

func (s *Server) listRoles(c *fiber.Ctx) error {
	out := rolesResponse{Items: s.svc.Agents.Roles(), Errors: s.svc.Agents.RoleProblems()}
	if out.Items == nil {
		out.Items = []bullpen.RoleInfo{}
	}
	if out.Errors == nil {
		out.Errors = []bullpen.RoleProblem{}
	}
	return c.JSON(out)
}

func (s *Server) listAgents(c *fiber.Ctx) error {
	as, err := s.svc.Agents.List(c.UserContext())
	return replyList(c, as, err)
}

func (s *Server) hireAgent(c *fiber.Ctx) error {
	return withBody(c, http.StatusCreated, s.svc.Agents.Hire)
}

// teamRequest is the body of a team hire.
type teamRequest struct {
	Pack string `json:"pack"`
}

// hireTeam hires a role pack in one request: the first run's "hire the
// starter team". Roles whose handle is taken are skipped, so a second
// call hires nobody; no tokens are returned (the runtime mints its own).
func (s *Server) hireTeam(c *fiber.Ctx) error {
	var in teamRequest
	if err := decode(c, &in); err != nil {
		return err
	}
	as, err := s.svc.Agents.HireTeam(c.UserContext(), actor(c), in.Pack)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(list(as))
}

func (s *Server) getAgent(c *fiber.Ctx) error { return keyed(c, pathID, anyone(s.svc.Agents.Get)) }

// agentUpdateIn is the body of an agent edit. Muted is read only to
// point at the one place muting happens.
type agentUpdateIn struct {
	bullpen.AgentUpdate
	Muted *bool `json:"muted"`
}

func (s *Server) updateAgent(c *fiber.Ctx) error {
	return keyedBody(c, http.StatusOK, pathID, func(ctx context.Context, me bullpen.Member, id int64, in agentUpdateIn) (bullpen.AgentView, error) {
		if in.Muted != nil {
			return bullpen.AgentView{}, bullpen.Errorf(bullpen.EINVALID,
				"muting is a member setting: PATCH /api/v1/members/%d {\"muted\":%t} (admins)", id, *in.Muted)
		}
		return s.svc.Agents.Update(ctx, me, id, in.AgentUpdate)
	})
}

func (s *Server) fireAgent(c *fiber.Ctx) error { return keyed(c, pathID, s.svc.Agents.Fire) }

// openSession starts (or returns) a session with an agent: the DM channel
// between the caller and the agent. Messages there always wake it.
func (s *Server) openSession(c *fiber.Ctx) error { return keyed(c, pathID, s.svc.Agents.OpenSession) }

// postToAgent posts in the caller's session with an agent, opening it on
// first use.
func (s *Server) postToAgent(c *fiber.Ctx) error {
	return keyedBody(c, http.StatusCreated, pathID, func(ctx context.Context, me bullpen.Member, id int64, in postRequest) (bullpen.Message, error) {
		ch, err := s.svc.Agents.OpenSession(ctx, me, id)
		if err != nil {
			return bullpen.Message{}, err
		}
		return s.poster(c)(ctx, me, ch.ID, in)
	})
}

func (s *Server) listTurns(c *fiber.Ctx) error {
	return keyedList(c, pathID, func(ctx context.Context, me bullpen.Member, id int64) ([]linkedTurn, error) {
		limit, err := rangeQuery(c, "limit", 50, 1, maxTurnsPage)
		if err != nil {
			return nil, err
		}
		if c.Query("before") != "" {
			return nil, bullpen.Errorf(bullpen.EINVALID, "query parameter before is not supported here: the turns come newest first, at most %d (limit)", maxTurnsPage)
		}
		ts, err := s.svc.Agents.Turns(ctx, me, id, int(limit))
		return linkTurns(ts), err
	})
}

func (s *Server) listApprovals(c *fiber.Ctx) error {
	as, err := s.svc.Agents.Approvals(c.UserContext(), actor(c), c.Query("state"))
	return replyList(c, as, err)
}

// answerRequest is the body of an approval answer.
type answerRequest struct {
	Decision string `json:"decision"` // approve or deny
	Note     string `json:"note"`
}

func (s *Server) answerApproval(c *fiber.Ctx) error {
	return keyedBody(c, http.StatusOK, pathID, func(ctx context.Context, me bullpen.Member, id int64, in answerRequest) (bullpen.Approval, error) {
		if in.Decision != "approve" && in.Decision != "deny" {
			return bullpen.Approval{}, bullpen.Errorf(bullpen.EINVALID, "decision must be \"approve\" or \"deny\"")
		}
		return s.svc.Agents.Answer(ctx, me, id, in.Decision == "approve", in.Note)
	})
}
