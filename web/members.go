package web

import (
	"net/http"

	"github.com/bullpen-hq/bullpen/office"
	"github.com/gofiber/fiber/v2"
)

func (s *Server) me(c *fiber.Ctx) error { return c.JSON(actor(c)) }

func (s *Server) listMembers(c *fiber.Ctx) error {
	ms, err := s.off.Members(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(list(ms))
}

func (s *Server) getMember(c *fiber.Ctx) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	m, err := s.off.Member(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(m)
}

func (s *Server) createMember(c *fiber.Ctx) error {
	var in office.MemberInput
	if err := decode(c, &in); err != nil {
		return err
	}
	m, err := s.off.CreateMember(c.UserContext(), actor(c), in)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(m)
}

func (s *Server) updateMember(c *fiber.Ctx) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	var up office.MemberUpdate
	if err := decode(c, &up); err != nil {
		return err
	}
	m, err := s.off.UpdateMember(c.UserContext(), actor(c), id, up)
	if err != nil {
		return err
	}
	return c.JSON(m)
}
