package web

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
)

// OfficeMembers is what the member handlers (and the dashboard) call.
type OfficeMembers interface {
	CreateMember(ctx context.Context, actor bullpen.Member, in bullpen.MemberInput) (bullpen.Member, error)
	UpdateMember(ctx context.Context, actor bullpen.Member, id int64, up bullpen.MemberUpdate) (bullpen.Member, error)
	Member(ctx context.Context, id int64) (bullpen.Member, error)
	MemberByHandle(ctx context.Context, handle string) (bullpen.Member, error)
	Members(ctx context.Context) ([]bullpen.Member, error)
}

func (s *Server) me(c *fiber.Ctx) error { return c.JSON(actor(c)) }

func (s *Server) listMembers(c *fiber.Ctx) error {
	ms, err := s.off.Members(c.UserContext())
	return replyList(c, ms, err)
}

func (s *Server) getMember(c *fiber.Ctx) error { return keyed(c, pathID, anyone(s.off.Member)) }

func (s *Server) createMember(c *fiber.Ctx) error {
	return withBody(c, http.StatusCreated, s.off.CreateMember)
}

func (s *Server) updateMember(c *fiber.Ctx) error {
	return keyedBody(c, http.StatusOK, pathID, s.off.UpdateMember)
}
