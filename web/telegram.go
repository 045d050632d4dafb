package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/bullpen-hq/bullpen/web/views"
	"github.com/gofiber/fiber/v2"
)

// Telegram is what the web layer needs of the Telegram bridge;
// *telegram.Bridge implements it. Every method but HandleWebhook and
// Status is for admins (EFORBIDDEN otherwise).
type Telegram interface {
	Status(ctx context.Context) (view.TelegramStatus, error)
	Configure(ctx context.Context, actor bullpen.Member, in bullpen.TelegramSettings) (view.TelegramStatus, error)
	Users(ctx context.Context, actor bullpen.Member) ([]view.TelegramUserView, error)
	PutUser(ctx context.Context, actor bullpen.Member, in bullpen.TelegramUserInput) (view.TelegramUserView, error)
	DeleteUser(ctx context.Context, actor bullpen.Member, telegramUserID int64) error
	Chats(ctx context.Context, actor bullpen.Member) ([]view.TelegramChatView, error)
	LinkChat(ctx context.Context, actor bullpen.Member, chatID int64, in bullpen.TelegramLinkInput) (view.TelegramChatView, error)
	UnlinkChat(ctx context.Context, actor bullpen.Member, chatID int64) error
	Outbox(ctx context.Context, actor bullpen.Member, state string) ([]bullpen.OutboxItem, error)
	Resend(ctx context.Context, actor bullpen.Member, id int64) (bullpen.OutboxItem, error)
	// HandleWebhook takes one update Telegram posted, with the value of its
	// X-Telegram-Bot-Api-Secret-Token header.
	HandleWebhook(ctx context.Context, secret string, body []byte) error
}

// telegramRoutes registers /api/v1/telegram.
func (s *Server) telegramRoutes(api fiber.Router) {
	g := api.Group("/telegram", s.needTelegram)
	g.Get("", s.telegramStatus)
	g.Put("", s.telegramConfigure)
	g.Get("/users", s.telegramUsers)
	g.Post("/users", s.telegramPutUser)
	g.Delete("/users/:id", s.telegramDeleteUser)
	g.Get("/chats", s.telegramChats)
	g.Put("/chats/:id", s.telegramLinkChat)
	g.Delete("/chats/:id", s.telegramUnlinkChat)
	g.Get("/outbox", s.telegramOutbox)
	g.Post("/outbox/:id/resend", s.telegramResend)
}

func (s *Server) needTelegram(c *fiber.Ctx) error {
	if s.svc.Telegram == nil {
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "the Telegram bridge is not part of this server")
	}
	return c.Next()
}

func (s *Server) telegramStatus(c *fiber.Ctx) error {
	if !actor(c).IsAdmin {
		return bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can see the Telegram settings")
	}
	st, err := s.svc.Telegram.Status(c.UserContext())
	return reply(c, http.StatusOK, st, err)
}

func (s *Server) telegramConfigure(c *fiber.Ctx) error {
	return withBody(c, http.StatusOK, s.svc.Telegram.Configure)
}

func (s *Server) telegramUsers(c *fiber.Ctx) error { return listed(c, s.svc.Telegram.Users) }

func (s *Server) telegramPutUser(c *fiber.Ctx) error {
	return withBody(c, http.StatusCreated, s.svc.Telegram.PutUser)
}

func (s *Server) telegramDeleteUser(c *fiber.Ctx) error {
	return keyedDo(c, pathID, s.svc.Telegram.DeleteUser)
}

func (s *Server) telegramChats(c *fiber.Ctx) error { return listed(c, s.svc.Telegram.Chats) }

// chatParam parses a Telegram chat ID, which is negative for groups.
func chatParam(c *fiber.Ctx) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id == 0 {
		return 0, bullpen.Errorf(bullpen.EINVALID, "the chat ID must be a non-zero integer (groups have negative IDs)")
	}
	return id, nil
}

func (s *Server) telegramLinkChat(c *fiber.Ctx) error {
	return keyedBody(c, http.StatusOK, chatParam, s.svc.Telegram.LinkChat)
}

func (s *Server) telegramUnlinkChat(c *fiber.Ctx) error {
	return keyedDo(c, chatParam, s.svc.Telegram.UnlinkChat)
}

func (s *Server) telegramOutbox(c *fiber.Ctx) error {
	items, err := s.svc.Telegram.Outbox(c.UserContext(), actor(c), c.Query("state"))
	return replyList(c, items, err)
}

func (s *Server) telegramResend(c *fiber.Ctx) error { return keyed(c, pathID, s.svc.Telegram.Resend) }

// telegramWebhook receives updates from Telegram. It needs no login: the
// secret token header proves the sender. It answers in JSON itself, so
// that a refusal is a plain status and never a login redirect; any
// non-2xx answer makes Telegram deliver the update again.
func (s *Server) telegramWebhook(c *fiber.Ctx) error {
	if s.svc.Telegram == nil {
		return c.Status(http.StatusNotFound).JSON(fiber.Map{"ok": false})
	}
	err := s.svc.Telegram.HandleWebhook(c.UserContext(), c.Get("X-Telegram-Bot-Api-Secret-Token"), c.Body())
	if err != nil {
		code := bullpen.ErrorCode(err)
		if code == bullpen.EINTERNAL {
			s.logFor(c).Error("telegram webhook", "err", err)
		}
		var body errorBody
		body.Error.Code, body.Error.Message = code, bullpen.ErrorMessage(err)
		return c.Status(statusOf(code)).JSON(body)
	}
	return c.JSON(fiber.Map{"ok": true})
}

// telegramPage renders the bridge's settings page for admins.
func (s *Server) telegramPage(c *fiber.Ctx) error {
	me := actor(c)
	if !me.IsAdmin {
		return bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can see the Telegram settings")
	}
	if s.svc.Telegram == nil {
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "the Telegram bridge is not part of this server")
	}
	ctx := c.UserContext()
	st, err := s.svc.Telegram.Status(ctx)
	if err != nil {
		return err
	}
	users, err := s.svc.Telegram.Users(ctx, me)
	if err != nil {
		return err
	}
	chats, err := s.svc.Telegram.Chats(ctx, me)
	if err != nil {
		return err
	}
	p := views.TelegramPage{Office: s.cfg.OfficeName, CSRF: csrfOf(c), State: st.State, Error: st.Error, Mode: st.Mode,
		TokenHint: st.TokenHint, TokenFromEnv: st.TokenFromEnv, BotUsername: st.BotUsername, WebhookURL: st.WebhookURL, Outbox: st.Outbox}
	for _, u := range users {
		p.Users = append(p.Users, views.TelegramUserItem{TelegramUserID: strconv.FormatInt(u.TelegramUserID, 10), Handle: u.Handle, CanApprove: u.CanApprove})
	}
	for _, ch := range chats {
		name := "#" + ch.ChannelName
		if ch.ChannelKind == string(bullpen.ChannelDM) {
			name = "DM " + ch.ChannelName
		}
		p.Chats = append(p.Chats, views.TelegramChatItem{ChatID: strconv.FormatInt(ch.ChatID, 10), Title: ch.Title, Channel: name})
	}
	for _, state := range []string{bullpen.OutboxUncertain, bullpen.OutboxFailed} {
		items, err := s.svc.Telegram.Outbox(ctx, me, state)
		if err != nil {
			return err
		}
		for _, it := range items {
			p.Stuck = append(p.Stuck, views.TelegramOutboxItem{ID: strconv.FormatInt(it.ID, 10), State: it.State,
				Chat: strconv.FormatInt(it.ChatID, 10), Error: it.LastError})
		}
	}
	return render(c, views.Telegram(p))
}
