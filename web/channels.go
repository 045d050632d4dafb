package web

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
)

// OfficeChannels is what the channel handlers (and the dashboard) call.
type OfficeChannels interface {
	CreateChannel(ctx context.Context, actor bullpen.Member, in bullpen.ChannelInput) (bullpen.Channel, error)
	OpenDM(ctx context.Context, actor bullpen.Member, otherID int64) (bullpen.Channel, error)
	Channels(ctx context.Context, actor bullpen.Member) ([]bullpen.Channel, error)
	Channel(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Channel, error)
	ChannelByName(ctx context.Context, actor bullpen.Member, name string) (bullpen.Channel, error)
	JoinChannel(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Channel, error)
	LeaveChannel(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Channel, error)
}

func (s *Server) listChannels(c *fiber.Ctx) error { return listed(c, s.off.Channels) }

func (s *Server) getChannel(c *fiber.Ctx) error { return keyed(c, pathID, s.off.Channel) }

func (s *Server) createChannel(c *fiber.Ctx) error {
	return withBody(c, http.StatusCreated, s.off.CreateChannel)
}

func (s *Server) joinChannel(c *fiber.Ctx) error { return keyed(c, pathID, s.off.JoinChannel) }

func (s *Server) leaveChannel(c *fiber.Ctx) error { return keyed(c, pathID, s.off.LeaveChannel) }

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
	return reply(c, http.StatusOK, ch, err)
}
