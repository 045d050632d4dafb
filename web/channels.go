package web

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/gofiber/fiber/v2"
)

func (s *Server) listChannels(c *fiber.Ctx) error {
	cs, err := s.off.Channels(c.UserContext(), actor(c))
	if err != nil {
		return err
	}
	return c.JSON(list(cs))
}

func (s *Server) getChannel(c *fiber.Ctx) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	ch, err := s.off.Channel(c.UserContext(), actor(c), id)
	if err != nil {
		return err
	}
	return c.JSON(ch)
}

func (s *Server) createChannel(c *fiber.Ctx) error {
	var in office.ChannelInput
	if err := decode(c, &in); err != nil {
		return err
	}
	ch, err := s.off.CreateChannel(c.UserContext(), actor(c), in)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(ch)
}

func (s *Server) joinChannel(c *fiber.Ctx) error {
	return s.membership(c, s.off.JoinChannel)
}

func (s *Server) leaveChannel(c *fiber.Ctx) error {
	return s.membership(c, s.off.LeaveChannel)
}

type membershipFunc func(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Channel, error)

func (s *Server) membership(c *fiber.Ctx, fn membershipFunc) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	ch, err := fn(c.UserContext(), actor(c), id)
	if err != nil {
		return err
	}
	return c.JSON(ch)
}

// dmRequest names the other member by ID or handle.
type dmRequest struct {
	MemberID int64  `json:"member_id"`
	Handle   string `json:"handle"`
}

func (s *Server) openDM(c *fiber.Ctx) error {
	var in dmRequest
	if err := decode(c, &in); err != nil {
		return err
	}
	ctx := c.UserContext()
	if in.Handle != "" {
		m, err := s.off.MemberByHandle(ctx, in.Handle)
		if err != nil {
			return err
		}
		in.MemberID = m.ID
	}
	if in.MemberID <= 0 {
		return bullpen.Errorf(bullpen.EINVALID, "member_id or handle is required")
	}
	ch, err := s.off.OpenDM(ctx, actor(c), in.MemberID)
	if err != nil {
		return err
	}
	return c.JSON(ch)
}
