package web

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
)

// OfficeMessages is what the message handlers (and the dashboard) call.
type OfficeMessages interface {
	Post(ctx context.Context, actor bullpen.Member, in bullpen.PostInput) (bullpen.Message, error)
	Edit(ctx context.Context, actor bullpen.Member, id int64, body string) (bullpen.Message, error)
	Delete(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Message, error)
	Message(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Message, error)
	ListMessages(ctx context.Context, actor bullpen.Member, channelID int64, cursor string, limit int) (bullpen.MessagePage, error)
	Thread(ctx context.Context, actor bullpen.Member, rootID int64) (bullpen.Message, []bullpen.Message, error)
}

// postRequest is the body of a new message.
type postRequest struct {
	Body     string `json:"body"`
	ThreadID int64  `json:"thread_id"`
}

func (s *Server) postMessage(c *fiber.Ctx) error {
	return keyedBody(c, http.StatusCreated, pathID, s.poster(c))
}

// poster posts a message by the caller in a channel, from whichever
// surface the request came through.
func (s *Server) poster(c *fiber.Ctx) func(context.Context, bullpen.Member, int64, postRequest) (bullpen.Message, error) {
	return func(ctx context.Context, me bullpen.Member, channelID int64, in postRequest) (bullpen.Message, error) {
		return s.off.Post(ctx, me, bullpen.PostInput{ChannelID: channelID, ThreadID: in.ThreadID, Body: in.Body, Source: source(c)})
	}
}

func (s *Server) listMessages(c *fiber.Ctx) error {
	return keyed(c, pathID, func(ctx context.Context, me bullpen.Member, id int64) (bullpen.MessagePage, error) {
		limit, err := intQuery(c, "limit", 50)
		if err != nil {
			return bullpen.MessagePage{}, err
		}
		return s.off.ListMessages(ctx, me, id, c.Query("before"), int(limit))
	})
}

func (s *Server) getMessage(c *fiber.Ctx) error { return keyed(c, pathID, s.off.Message) }

// threadView is a thread as the API shows it (fields in the order the
// map it replaces encoded them).
type threadView struct {
	Replies []bullpen.Message `json:"replies"`
	Root    bullpen.Message   `json:"root"`
}

func (s *Server) getThread(c *fiber.Ctx) error {
	return keyed(c, pathID, func(ctx context.Context, me bullpen.Member, id int64) (threadView, error) {
		root, replies, err := s.off.Thread(ctx, me, id)
		if replies == nil {
			replies = []bullpen.Message{}
		}
		return threadView{Root: root, Replies: replies}, err
	})
}

// editRequest is the body of an edit.
type editRequest struct {
	Body string `json:"body"`
}

func (s *Server) editMessage(c *fiber.Ctx) error {
	return keyedBody(c, http.StatusOK, pathID, func(ctx context.Context, me bullpen.Member, id int64, in editRequest) (bullpen.Message, error) {
		return s.off.Edit(ctx, me, id, in.Body)
	})
}

func (s *Server) deleteMessage(c *fiber.Ctx) error { return keyed(c, pathID, s.off.Delete) }
