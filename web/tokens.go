package web

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"

	"github.com/gofiber/fiber/v2"
)

// tokenRequest creates a token, for the caller or (admins) another member.
type tokenRequest struct {
	Name     string `json:"name"`
	MemberID int64  `json:"member_id"`
}

// tokenResponse shows the secret once, at creation.
type tokenResponse struct {
	bullpen.Token
	Secret string `json:"token"`
}

func (s *Server) listTokens(c *fiber.Ctx) error { return listed(c, s.off.Tokens) }

func (s *Server) createToken(c *fiber.Ctx) error {
	return withBody(c, http.StatusCreated, func(ctx context.Context, me bullpen.Member, in tokenRequest) (tokenResponse, error) {
		secret, t, err := s.off.CreateToken(ctx, me, in.MemberID, in.Name)
		return tokenResponse{Token: t, Secret: secret}, err
	})
}

func (s *Server) revokeToken(c *fiber.Ctx) error { return keyedDo(c, pathID, s.off.RevokeToken) }
