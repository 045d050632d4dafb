package web

import (
	"net/http"

	"github.com/bullpen-hq/bullpen/office"
	"github.com/gofiber/fiber/v2"
)

// postRequest is the body of a new message.
type postRequest struct {
	Body     string `json:"body"`
	ThreadID int64  `json:"thread_id"`
}

func (s *Server) postMessage(c *fiber.Ctx) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	var in postRequest
	if err := decode(c, &in); err != nil {
		return err
	}
	return s.post(c, id, in)
}

// post stores a message by the caller, from whichever surface the
// request came through, and answers 201 with it.
func (s *Server) post(c *fiber.Ctx, channelID int64, in postRequest) error {
	m, err := s.off.Post(c.UserContext(), actor(c), office.PostInput{ChannelID: channelID, ThreadID: in.ThreadID, Body: in.Body, Source: source(c)})
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(m)
}

func (s *Server) listMessages(c *fiber.Ctx) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	limit, err := intQuery(c, "limit", 50)
	if err != nil {
		return err
	}
	page, err := s.off.ListMessages(c.UserContext(), actor(c), id, c.Query("before"), int(limit))
	if err != nil {
		return err
	}
	return c.JSON(page)
}

func (s *Server) getMessage(c *fiber.Ctx) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	m, err := s.off.Message(c.UserContext(), actor(c), id)
	if err != nil {
		return err
	}
	return c.JSON(m)
}

func (s *Server) getThread(c *fiber.Ctx) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	root, replies, err := s.off.Thread(c.UserContext(), actor(c), id)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"root": root, "replies": list(replies)["items"]})
}

// editRequest is the body of an edit.
type editRequest struct {
	Body string `json:"body"`
}

func (s *Server) editMessage(c *fiber.Ctx) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	var in editRequest
	if err := decode(c, &in); err != nil {
		return err
	}
	m, err := s.off.Edit(c.UserContext(), actor(c), id, in.Body)
	if err != nil {
		return err
	}
	return c.JSON(m)
}

func (s *Server) deleteMessage(c *fiber.Ctx) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	m, err := s.off.Delete(c.UserContext(), actor(c), id)
	if err != nil {
		return err
	}
	return c.JSON(m)
}
