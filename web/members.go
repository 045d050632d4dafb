package web

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

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
