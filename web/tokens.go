package web

import (
	"net/http"

	"github.com/bullpen-hq/bullpen/office"
	"github.com/gofiber/fiber/v2"
)

// tokenRequest creates a token, for the caller or (admins) another member.
type tokenRequest struct {
	Name     string `json:"name"`
	MemberID int64  `json:"member_id"`
}

// tokenResponse shows the secret once, at creation.
type tokenResponse struct {
	office.Token
	Secret string `json:"token"`
}

func (s *Server) listTokens(c *fiber.Ctx) error {
	ts, err := s.off.Tokens(c.UserContext(), actor(c))
	if err != nil {
		return err
	}
	return c.JSON(list(ts))
}

func (s *Server) createToken(c *fiber.Ctx) error {
	var in tokenRequest
	if err := decode(c, &in); err != nil {
		return err
	}
	secret, t, err := s.off.CreateToken(c.UserContext(), actor(c), in.MemberID, in.Name)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(tokenResponse{Token: t, Secret: secret})
}

func (s *Server) revokeToken(c *fiber.Ctx) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	if err := s.off.RevokeToken(c.UserContext(), actor(c), id); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}
