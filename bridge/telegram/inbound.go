package telegram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/go-telegram/bot/models"
)

// pollLoop long-polls getUpdates from the committed offset and handles
// each update in order. stop ends the whole run (a refused token).
func (b *Bridge) pollLoop(ctx context.Context, cl *client, stop context.CancelFunc) {
	failures := 0
	for ctx.Err() == nil {
		b.inMu.Lock()
		offset := b.offset
		b.inMu.Unlock()
		ups, err := cl.getUpdates(ctx, offset, b.cfg.PollTimeout)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			var ae *apiError
			switch {
			case errors.As(err, &ae) && ae.Code == 401:
				b.unauthorized()
				stop()
				return
			case errors.As(err, &ae) && ae.Code == 409:
				b.setError("getUpdates conflict: another process polls this bot, or a webhook is set (" + ae.Description + ")")
			case errors.As(err, &ae) && ae.Code == 429:
				b.sleep(ctx, max(b.backoff(failures), secondsOf(ae.RetryAfter)))
				continue
			default:
				b.log.Warn("telegram: getUpdates", "err", err)
			}
			failures++
			b.sleep(ctx, b.backoff(failures))
			continue
		}
		if failures > 0 {
			failures = 0
			b.mu.Lock()
			b.state, b.lastErr = StateRunning, ""
			b.mu.Unlock()
		}
		for i := range ups {
			if err := b.handleWithRetry(ctx, &ups[i]); err != nil {
				return // ctx ended
			}
		}
	}
}

// handleWithRetry handles one update, retrying while the database fails,
// so that no update is skipped.
func (b *Bridge) handleWithRetry(ctx context.Context, u *models.Update) error {
	for attempt := 0; ; attempt++ {
		err := b.handle(ctx, u)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		b.log.Error("telegram: handle update", "update", u.ID, "err", err)
		if err := b.sleep(ctx, b.backoff(attempt)); err != nil {
			return err
		}
	}
}

// HandleWebhook handles one update that Telegram posted to the webhook.
// secret is the X-Telegram-Bot-Api-Secret-Token header. An error makes
// the web layer answer non-200, so Telegram delivers the update again.
func (b *Bridge) HandleWebhook(ctx context.Context, secret string, body []byte) error {
	b.mu.Lock()
	// A standby handles webhook updates too: the offset check in the
	// update's transaction refuses one that another replica handled.
	mode, want, running := b.mode, b.secret, b.state == StateRunning || b.state == StateStandby
	b.mu.Unlock()
	if mode != ModeWebhook || want == "" {
		return bullpen.Errorf(bullpen.ENOTFOUND, "the Telegram webhook is not enabled")
	}
	if subtle.ConstantTimeCompare([]byte(secret), []byte(want)) != 1 {
		return bullpen.Errorf(bullpen.EUNAUTHORIZED, "wrong or missing X-Telegram-Bot-Api-Secret-Token")
	}
	if !running {
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "the Telegram bridge is not running")
	}
	var u models.Update
	if err := json.Unmarshal(body, &u); err != nil || u.ID == 0 {
		return bullpen.Errorf(bullpen.EINVALID, "the body is not a Telegram update")
	}
	return b.handle(ctx, &u)
}

// handle processes one update. Its effects and the next offset commit
// together; an update below the offset was handled before and is skipped,
// whether this process knows it (b.offset) or the stored offset says so
// (another replica handled it, or this one before a restart).
func (b *Bridge) handle(ctx context.Context, u *models.Update) error {
	b.inMu.Lock()
	defer b.inMu.Unlock()
	if u.ID < b.offset {
		return nil
	}
	var err error
	switch {
	case u.Message != nil && u.Message.From != nil && !u.Message.From.IsBot:
		err = b.onMessage(ctx, u.ID, u.Message)
	case u.CallbackQuery != nil:
		err = b.onCallback(ctx, u.ID, u.CallbackQuery)
	default:
		_, err = b.db.Transact(ctx, func(tx *store.Tx) error { return tx.AdvanceTelegramOffset(u.ID) })
	}
	if errors.Is(err, store.ErrTelegramUpdateHandled) {
		b.log.Debug("telegram: update already handled", "update", u.ID)
	} else if err != nil {
		return err
	}
	b.offset = u.ID + 1
	return nil
}

// sender is an allowlisted Telegram user with its member.
type sender struct {
	user   bullpen.TelegramUser
	member bullpen.Member
}

// allowed returns the sender of an allowlisted Telegram user; ENOTFOUND
// for anyone else.
func (b *Bridge) allowed(ctx context.Context, telegramUserID int64) (sender, error) {
	u, err := b.db.TelegramUser(ctx, telegramUserID)
	if err != nil {
		return sender{}, err
	}
	m, err := b.off.Member(ctx, u.MemberID)
	if err != nil {
		return sender{}, err
	}
	if m.Kind != bullpen.KindHuman {
		return sender{}, bullpen.Errorf(bullpen.ENOTFOUND, "Telegram user %d is not mapped to a human", telegramUserID)
	}
	return sender{user: u, member: m}, nil
}

// onMessage handles a user's message: a refusal for strangers, a command,
// or a post into the chat's channel.
func (b *Bridge) onMessage(ctx context.Context, updateID int64, m *models.Message) error {
	who, err := b.allowed(ctx, m.From.ID)
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return b.refuse(ctx, updateID, m)
	} else if err != nil {
		return err
	}
	text := m.Text
	if text == "" {
		text = m.Caption
	}
	if strings.TrimSpace(text) == "" {
		return b.replyAndAdvance(ctx, updateID, m, "Only text reaches the office for now.")
	}
	if cmd, args, ok := b.command(text); ok {
		return b.onCommand(ctx, updateID, m, who, cmd, args)
	}
	return b.postFrom(ctx, updateID, m, who, b.stripBotMention(text))
}

// refuse answers a stranger and stores nothing but the offset. In groups
// only messages meant for the bot get an answer, so that a stranger in a
// busy group does not make the bot chatter.
func (b *Bridge) refuse(ctx context.Context, updateID int64, m *models.Message) error {
	if st, err := b.db.TelegramBot(ctx); err != nil {
		return err
	} else if st.UpdateOffset > updateID {
		return store.ErrTelegramUpdateHandled // a second delivery: do not answer twice
	}
	if m.Chat.Type == models.ChatTypePrivate || b.addressesBot(m) {
		b.mu.Lock()
		cl := b.cl
		b.mu.Unlock()
		if cl != nil {
			callCtx, done := context.WithTimeout(ctx, 15*time.Second)
			text := fmt.Sprintf("Sorry, this bot only works for the members of an office. If you are one, ask an admin to add your Telegram user ID <code>%d</code> to the allowlist.", m.From.ID)
			if _, _, err := cl.sendHTML(callCtx, m.Chat.ID, text, 0, nil); err != nil {
				b.log.Warn("telegram: refusal not sent", "err", redact(err.Error(), cl.token))
			}
			done()
		}
	}
	_, err := b.db.Transact(ctx, func(tx *store.Tx) error { return tx.AdvanceTelegramOffset(updateID) })
	return err
}

// addressesBot reports whether a group message is a command, a reply to
// the bot or mentions it.
func (b *Bridge) addressesBot(m *models.Message) bool {
	b.mu.Lock()
	name := b.username
	b.mu.Unlock()
	switch {
	case strings.HasPrefix(m.Text, "/"):
		return true
	case m.ReplyToMessage != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.IsBot:
		return true
	}
	return name != "" && strings.Contains(strings.ToLower(m.Text), "@"+strings.ToLower(name))
}

// stripBotMention removes a leading "@botname".
func (b *Bridge) stripBotMention(text string) string {
	b.mu.Lock()
	name := b.username
	b.mu.Unlock()
	if name == "" {
		return text
	}
	t := strings.TrimSpace(text)
	if len(t) > len(name)+1 && strings.EqualFold(t[:len(name)+1], "@"+name) {
		if rest := strings.TrimSpace(t[len(name)+1:]); rest != "" {
			return rest
		}
	}
	return text
}

// postFrom posts text as the sender into the chat's channel. A reply to a
// relayed message goes into that message's thread and addresses its
// author when that is an agent.
func (b *Bridge) postFrom(ctx context.Context, updateID int64, m *models.Message, who sender, text string) error {
	chat, err := b.ensureChat(ctx, m, who.member)
	if err != nil {
		return b.userError(ctx, updateID, m, err)
	}
	ch, err := b.off.Channel(ctx, who.member, chat.ChannelID)
	if err != nil {
		return b.userError(ctx, updateID, m, err)
	}
	in := bullpen.PostInput{ChannelID: chat.ChannelID, Body: text, Source: bullpen.SourceTelegram}
	if m.ReplyToMessage != nil {
		thread, body, err := b.replyContext(ctx, ch, m.Chat.ID, int64(m.ReplyToMessage.ID), text)
		if err != nil {
			return err
		}
		in.ThreadID, in.Body = thread, body
	}
	msg, err := b.off.PostWith(ctx, who.member, in, func(tx *store.Tx, msg bullpen.Message) error {
		err := tx.RecordTelegramMessage(store.TelegramMessage{ChatID: m.Chat.ID, TgMessageID: int64(m.ID),
			Direction: store.TelegramIn, MessageID: msg.ID})
		if err != nil {
			return err
		}
		return tx.AdvanceTelegramOffset(updateID)
	})
	if err != nil {
		return b.userError(ctx, updateID, m, err)
	}
	b.log.Debug("telegram: posted", "message", msg.ID, "channel", msg.ChannelID)
	return nil
}

// replyContext maps a Telegram reply to an office thread. When the
// replied-to message is an agent's and the text does not mention it, the
// agent's @handle is put in front so that the wake rules address it.
func (b *Bridge) replyContext(ctx context.Context, ch bullpen.Channel, chatID, replyTo int64, text string) (int64, string, error) {
	tm, err := b.db.TelegramMessage(ctx, chatID, replyTo)
	if bullpen.IsCode(err, bullpen.ENOTFOUND) || (err == nil && tm.MessageID == 0) {
		return 0, text, nil // a reply to something the office never saw
	} else if err != nil {
		return 0, "", err
	}
	orig, err := b.db.Message(ctx, tm.MessageID)
	if err != nil || orig.ChannelID != ch.ID {
		return 0, text, nil
	}
	var thread int64
	if ch.Kind == bullpen.ChannelPublic {
		thread = orig.ID
		if orig.ThreadID != 0 {
			thread = orig.ThreadID
		}
	}
	author, err := b.off.Member(ctx, orig.AuthorID)
	if err != nil {
		return 0, "", err
	}
	if author.Kind == bullpen.KindAgent && !containsString(bullpen.ParseMentions(text), author.Handle) {
		text = "@" + author.Handle + " " + text
	}
	return thread, text, nil
}

// ensureChat returns the chat's link, linking a new chat to a channel of
// its own made by actor. The channel's topic names the chat, so that a
// retry after a crash finds the channel it made instead of making another.
func (b *Bridge) ensureChat(ctx context.Context, m *models.Message, actor bullpen.Member) (bullpen.TelegramChat, error) {
	c, err := b.db.TelegramChat(ctx, m.Chat.ID)
	if err == nil || !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return c, err
	}
	title := chatTitle(m)
	topic := clipRunes(fmt.Sprintf("Telegram: %s", title), 200) + fmt.Sprintf(" (chat %d)", m.Chat.ID)
	base := channelSlug(title, m.Chat.ID)
	var ch bullpen.Channel
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		ch, err = b.off.CreateChannel(ctx, actor, bullpen.ChannelInput{Name: name, Topic: topic})
		if err == nil {
			break
		}
		if !bullpen.IsCode(err, bullpen.ECONFLICT) || i >= 20 {
			return c, err
		}
		if prev, err := b.db.ChannelByName(ctx, name); err == nil && prev.Topic == topic {
			ch = prev
			break
		}
	}
	_, err = b.db.Transact(ctx, func(tx *store.Tx) error {
		c, err = tx.PutTelegramChat(bullpen.TelegramChat{ChatID: m.Chat.ID, ChannelID: ch.ID, Type: string(m.Chat.Type), Title: title})
		return err
	})
	return c, err
}

// chatTitle names a chat for its channel's topic. Titles come from
// Telegram users, so characters that hide or disguise text are dropped
// rather than refusing the chat (topics refuse them).
func chatTitle(m *models.Message) string {
	return bullpen.CleanText(rawChatTitle(m))
}

func rawChatTitle(m *models.Message) string {
	switch {
	case m.Chat.Title != "":
		return m.Chat.Title
	case m.Chat.Username != "":
		return m.Chat.Username
	case m.Chat.FirstName != "":
		return strings.TrimSpace(m.Chat.FirstName + " " + m.Chat.LastName)
	case m.From.Username != "":
		return m.From.Username
	}
	return m.From.FirstName
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// channelSlug names a chat's channel: "tg-" and its title in channel
// characters.
func channelSlug(title string, chatID int64) string {
	s := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(title), "-"), "-")
	if len(s) > 40 {
		s = strings.Trim(s[:40], "-")
	}
	if s == "" {
		return fmt.Sprintf("tg-%d", max(chatID, -chatID))
	}
	return "tg-" + s
}

// userError tells the user why their message did not go through and
// moves on; other errors are returned so the update is tried again.
func (b *Bridge) userError(ctx context.Context, updateID int64, m *models.Message, err error) error {
	if !isUserError(err) {
		return err
	}
	return b.replyAndAdvance(ctx, updateID, m, "⚠️ "+bullpen.ErrorMessage(err))
}

// replyAndAdvance queues a plain-text answer and moves the offset, in one
// transaction.
func (b *Bridge) replyAndAdvance(ctx context.Context, updateID int64, m *models.Message, text string) error {
	return b.answerAndAdvance(ctx, updateID, m, Escape(text))
}

// answerAndAdvance queues an HTML answer and moves the offset, in one
// transaction with the changes of also.
func (b *Bridge) answerAndAdvance(ctx context.Context, updateID int64, m *models.Message, html string, also ...func(*store.Tx) error) error {
	var items []bullpen.OutboxItem
	for i, part := range Split(html, MaxMessage) {
		it := bullpen.OutboxItem{ChatID: m.Chat.ID, Method: bullpen.OutboxSend, Text: part, Part: i}
		if i == 0 {
			it.ReplyTo = int64(m.ID)
		}
		items = append(items, it)
	}
	_, err := b.db.Transact(ctx, func(tx *store.Tx) error {
		for _, fn := range also {
			if err := fn(tx); err != nil {
				return err
			}
		}
		if err := tx.EnqueueTelegram(items...); err != nil {
			return err
		}
		return tx.AdvanceTelegramOffset(updateID)
	})
	if err == nil {
		b.wakeOutbox()
	}
	return err
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func secondsOf(n int) time.Duration { return time.Duration(n) * time.Second }
