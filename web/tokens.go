package web

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/view"

	"github.com/gofiber/fiber/v2"
)

// OfficeTokens is the admin side of tokens; *office.Office implements it.
type OfficeTokens interface {
	// AllTokens lists every member's tokens (admins; EFORBIDDEN otherwise).
	AllTokens(ctx context.Context, actor bullpen.Member) ([]view.TokenView, error)
	// Revoke revokes one of actor's tokens, or (admins) anyone's.
	Revoke(ctx context.Context, actor bullpen.Member, id int64) error
}

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

// listTokens lists the caller's tokens; ?all=1 (admins) lists everyone's,
// agents' included, with each member's handle.
func (s *Server) listTokens(c *fiber.Ctx) error {
	switch c.Query("all") {
	case "", "0", "false":
		return listed(c, s.off.Tokens)
	case "1", "true":
		return listed(c, s.off.AllTokens)
	}
	return bullpen.Errorf(bullpen.EINVALID, "all must be 1 or 0")
}

func (s *Server) createToken(c *fiber.Ctx) error {
	return withBody(c, http.StatusCreated, func(ctx context.Context, me bullpen.Member, in tokenRequest) (tokenResponse, error) {
		secret, t, err := s.off.CreateToken(ctx, me, in.MemberID, in.Name)
		return tokenResponse{Token: t, Secret: secret}, err
	})
}

// revokeToken revokes one of the caller's tokens, or any token for an admin.
func (s *Server) revokeToken(c *fiber.Ctx) error { return keyedDo(c, pathID, s.off.Revoke) }
