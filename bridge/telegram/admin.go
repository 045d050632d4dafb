package telegram

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/view"
)

// Env is the bridge's configuration from environment variables. Set
// fields win over what the dashboard stored, and the dashboard cannot
// change them.
type Env struct {
	Token         string
	Mode          string
	WebhookURL    string
	WebhookSecret string
	// Users are added to the allowlist at start.
	Users []EnvUser
}

// EnvUser is one allowlist entry from the environment.
type EnvUser struct {
	TelegramUserID int64
	Handle         string
	CanApprove     bool
}

// ParseUsers reads an allowlist such as "123456789=alice,987654321=bob";
// approvers lists the Telegram user IDs (comma-separated) that may answer
// approvals.
func ParseUsers(users, approvers string) ([]EnvUser, error) {
	can := map[int64]bool{}
	for _, f := range splitList(approvers) {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil || id <= 0 {
			return nil, fmt.Errorf("telegram: approver %q is not a Telegram user ID", f)
		}
		can[id] = true
	}
	var out []EnvUser
	for _, f := range splitList(users) {
		idText, handle, ok := strings.Cut(f, "=")
		id, err := strconv.ParseInt(strings.TrimSpace(idText), 10, 64)
		handle = strings.TrimPrefix(strings.TrimSpace(handle), "@")
		if !ok || err != nil || id <= 0 || handle == "" {
			return nil, fmt.Errorf("telegram: allowlist entry %q must look like 123456789=handle", f)
		}
		out = append(out, EnvUser{TelegramUserID: id, Handle: handle, CanApprove: can[id]})
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

var tokenRE = regexp.MustCompile(`^[0-9]{1,20}:[A-Za-z0-9_-]{20,100}$`)

// ValidateToken checks a bot token's shape: "<bot id>:<secret>".
func ValidateToken(token string) error {
	if !tokenRE.MatchString(token) {
		return bullpen.Errorf(bullpen.EINVALID, "the bot token must look like 123456789:AA… (as @BotFather gives it)")
	}
	return nil
}

func tokenBotID(token string) int64 {
	id, _ := strconv.ParseInt(strings.SplitN(token, ":", 2)[0], 10, 64)
	return id
}

func validateMode(mode, webhookURL string) error {
	switch mode {
	case ModePolling:
		return nil
	case ModeWebhook:
		u, err := url.Parse(webhookURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return bullpen.Errorf(bullpen.EINVALID, "webhook mode needs webhook_url, the public https:// URL of %s on this server", bullpen.TelegramWebhookPath)
		}
		return nil
	}
	return bullpen.Errorf(bullpen.EINVALID, "mode must be %q or %q", ModePolling, ModeWebhook)
}

func newSecret() string {
	b := make([]byte, 24)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// applyEnv stores the environment's settings and allowlist.
func (b *Bridge) applyEnv(ctx context.Context) error {
	env := b.cfg.Env
	if env.Token != "" || env.Mode != "" || env.WebhookURL != "" || env.WebhookSecret != "" {
		st, err := b.db.TelegramBot(ctx)
		if err != nil {
			return err
		}
		token, mode, hook, secret := or(env.Token, st.Token), or(env.Mode, st.Mode), or(env.WebhookURL, st.WebhookURL), or(env.WebhookSecret, st.WebhookSecret)
		if err := b.save(ctx, token, mode, hook, secret); err != nil {
			return fmt.Errorf("telegram: environment: %w", err)
		}
	}
	for _, u := range env.Users {
		m, err := b.off.MemberByHandle(ctx, u.Handle)
		if err != nil || m.Kind != bullpen.KindHuman {
			b.log.Warn("telegram: allowlist entry skipped: no human member with that handle", "telegram_user_id", u.TelegramUserID, "handle", u.Handle)
			continue
		}
		_, err = b.db.Transact(ctx, func(tx *store.Tx) error {
			_, err := tx.PutTelegramUser(bullpen.TelegramUser{TelegramUserID: u.TelegramUserID, MemberID: m.ID, CanApprove: u.CanApprove})
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// save validates and stores the settings.
func (b *Bridge) save(ctx context.Context, token, mode, hook, secret string) error {
	if mode == "" {
		mode = ModePolling
	}
	if token != "" {
		if err := ValidateToken(token); err != nil {
			return err
		}
	}
	if err := validateMode(mode, hook); err != nil {
		return err
	}
	if mode == ModeWebhook && hook != "" && !strings.HasSuffix(hook, bullpen.TelegramWebhookPath) {
		hook = strings.TrimRight(hook, "/") + bullpen.TelegramWebhookPath
	}
	if secret == "" {
		secret = newSecret()
	}
	_, err := b.db.Transact(ctx, func(tx *store.Tx) error {
		return tx.SetTelegramSettings(token, mode, hook, secret, tokenBotID(token), b.off.Hub().Last())
	})
	return err
}

// Configure saves new settings and restarts the bridge with them. Only
// admins may. A new token is checked with getMe first: one Telegram
// refuses is EINVALID and nothing changes. Settings from the environment
// cannot be changed here (EINVALID).
func (b *Bridge) Configure(ctx context.Context, actor bullpen.Member, in bullpen.TelegramSettings) (view.TelegramStatus, error) {
	if !actor.IsAdmin {
		return view.TelegramStatus{}, bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can configure Telegram")
	}
	env := b.cfg.Env
	switch {
	case in.Token != nil && env.Token != "":
		return view.TelegramStatus{}, bullpen.Errorf(bullpen.EINVALID, "the bot token is set by BULLPEN_TELEGRAM_TOKEN; change it there")
	case in.Mode != nil && env.Mode != "":
		return view.TelegramStatus{}, bullpen.Errorf(bullpen.EINVALID, "the mode is set by BULLPEN_TELEGRAM_MODE; change it there")
	case in.WebhookURL != nil && env.WebhookURL != "":
		return view.TelegramStatus{}, bullpen.Errorf(bullpen.EINVALID, "the webhook URL is set by BULLPEN_TELEGRAM_WEBHOOK_URL; change it there")
	}
	st, err := b.db.TelegramBot(ctx)
	if err != nil {
		return view.TelegramStatus{}, err
	}
	token, mode, hook := st.Token, st.Mode, st.WebhookURL
	if in.Token != nil {
		token = strings.TrimSpace(*in.Token)
		if token != "" && token != st.Token {
			if err := b.checkToken(ctx, token); err != nil {
				return view.TelegramStatus{}, err
			}
		}
	}
	if in.Mode != nil {
		mode = *in.Mode
	}
	if in.WebhookURL != nil {
		hook = strings.TrimSpace(*in.WebhookURL)
	}
	if err := b.save(ctx, token, mode, hook, st.WebhookSecret); err != nil {
		return view.TelegramStatus{}, err
	}
	if err := b.restart(ctx); err != nil {
		return view.TelegramStatus{}, err
	}
	return b.waitStarted(ctx)
}

// checkToken asks Telegram whether it knows the token.
func (b *Bridge) checkToken(ctx context.Context, token string) error {
	if err := ValidateToken(token); err != nil {
		return err
	}
	cl, err := newClient(token, b.cfg.ServerURL, b.cfg.HTTPClient)
	if err != nil {
		return bullpen.Errorf(bullpen.EINVALID, "%s", err.Error())
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	_, err = cl.getMe(cctx)
	if out, _ := classify(err, nil); err != nil && out == outcomeUnauthorized {
		return bullpen.Errorf(bullpen.EINVALID, "Telegram refused this token (401 Unauthorized): check it with @BotFather")
	}
	return nil // unreachable or fine: the status will say which
}

// waitStarted waits briefly for the bridge to leave "starting", so that
// the answer shows whether it runs.
func (b *Bridge) waitStarted(ctx context.Context) (view.TelegramStatus, error) {
	for i := 0; i < 50; i++ {
		b.mu.Lock()
		starting := b.state == StateStarting
		b.mu.Unlock()
		if !starting {
			break
		}
		select {
		case <-ctx.Done():
			return view.TelegramStatus{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return b.Status(ctx)
}

func admin(actor bullpen.Member) error {
	if !actor.IsAdmin {
		return bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can manage the Telegram bridge")
	}
	return nil
}

// Users lists the allowlist. Admins only.
func (b *Bridge) Users(ctx context.Context, actor bullpen.Member) ([]view.TelegramUserView, error) {
	if err := admin(actor); err != nil {
		return nil, err
	}
	us, err := b.db.TelegramUsers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]view.TelegramUserView, 0, len(us))
	for _, u := range us {
		v := view.TelegramUserView{TelegramUser: u}
		if m, err := b.off.Member(ctx, u.MemberID); err == nil {
			v.Handle, v.DisplayName = m.Handle, m.DisplayName
		}
		out = append(out, v)
	}
	return out, nil
}

// PutUser adds a Telegram user to the allowlist as a human member, or
// changes its entry. Admins only.
func (b *Bridge) PutUser(ctx context.Context, actor bullpen.Member, in bullpen.TelegramUserInput) (view.TelegramUserView, error) {
	if err := admin(actor); err != nil {
		return view.TelegramUserView{}, err
	}
	if in.TelegramUserID <= 0 {
		return view.TelegramUserView{}, bullpen.Errorf(bullpen.EINVALID, "telegram_user_id must be a positive Telegram user ID (the bot's /start shows it to a refused user)")
	}
	var m bullpen.Member
	var err error
	switch {
	case in.Handle != "":
		m, err = b.off.MemberByHandle(ctx, strings.TrimPrefix(in.Handle, "@"))
	case in.MemberID > 0:
		m, err = b.off.Member(ctx, in.MemberID)
	default:
		return view.TelegramUserView{}, bullpen.Errorf(bullpen.EINVALID, "handle or member_id is required")
	}
	if err != nil {
		return view.TelegramUserView{}, err
	}
	if m.Kind != bullpen.KindHuman {
		return view.TelegramUserView{}, bullpen.Errorf(bullpen.EINVALID, "@%s is an agent; Telegram users map to humans", m.Handle)
	}
	var u bullpen.TelegramUser
	_, err = b.db.Transact(ctx, func(tx *store.Tx) error {
		u, err = tx.PutTelegramUser(bullpen.TelegramUser{TelegramUserID: in.TelegramUserID, MemberID: m.ID, CanApprove: in.CanApprove})
		return err
	})
	return view.TelegramUserView{TelegramUser: u, Handle: m.Handle, DisplayName: m.DisplayName}, err
}

// DeleteUser removes a Telegram user from the allowlist. Admins only.
func (b *Bridge) DeleteUser(ctx context.Context, actor bullpen.Member, telegramUserID int64) error {
	if err := admin(actor); err != nil {
		return err
	}
	_, err := b.db.Transact(ctx, func(tx *store.Tx) error { return tx.DeleteTelegramUser(telegramUserID) })
	return err
}

// Chats lists linked chats. Admins only.
func (b *Bridge) Chats(ctx context.Context, actor bullpen.Member) ([]view.TelegramChatView, error) {
	if err := admin(actor); err != nil {
		return nil, err
	}
	cs, err := b.db.TelegramChats(ctx, 0)
	if err != nil {
		return nil, err
	}
	out := make([]view.TelegramChatView, 0, len(cs))
	for _, c := range cs {
		v := view.TelegramChatView{TelegramChat: c}
		if ch, err := b.db.Channel(ctx, c.ChannelID); err == nil {
			v.ChannelName, v.ChannelKind = ch.Name, string(ch.Kind)
		}
		out = append(out, v)
	}
	return out, nil
}

// LinkChat links a chat (by its Telegram chat ID) to a channel. Admins
// only.
func (b *Bridge) LinkChat(ctx context.Context, actor bullpen.Member, chatID int64, in bullpen.TelegramLinkInput) (view.TelegramChatView, error) {
	if err := admin(actor); err != nil {
		return view.TelegramChatView{}, err
	}
	if chatID == 0 {
		return view.TelegramChatView{}, bullpen.Errorf(bullpen.EINVALID, "chat_id is required (the bot's /start shows it)")
	}
	var ch bullpen.Channel
	var err error
	switch {
	case in.ChannelID > 0:
		ch, err = b.off.Channel(ctx, actor, in.ChannelID)
	case in.Channel != "":
		ch, err = b.off.ChannelByName(ctx, actor, strings.TrimPrefix(in.Channel, "#"))
	case in.DMWith != "":
		ch, err = b.dmChannel(ctx, actor, in)
	default:
		return view.TelegramChatView{}, bullpen.Errorf(bullpen.EINVALID, "channel_id, channel or dm_with is required")
	}
	if err != nil {
		return view.TelegramChatView{}, err
	}
	prev, _ := b.db.TelegramChat(ctx, chatID)
	var c bullpen.TelegramChat
	_, err = b.db.Transact(ctx, func(tx *store.Tx) error {
		c, err = tx.PutTelegramChat(bullpen.TelegramChat{ChatID: chatID, ChannelID: ch.ID, Type: prev.Type, Title: prev.Title})
		return err
	})
	return view.TelegramChatView{TelegramChat: c, ChannelName: ch.Name, ChannelKind: string(ch.Kind)}, err
}

func (b *Bridge) dmChannel(ctx context.Context, actor bullpen.Member, in bullpen.TelegramLinkInput) (bullpen.Channel, error) {
	agent, err := b.off.MemberByHandle(ctx, strings.TrimPrefix(in.DMWith, "@"))
	if err != nil {
		return bullpen.Channel{}, err
	}
	if agent.Kind != bullpen.KindAgent {
		return bullpen.Channel{}, bullpen.Errorf(bullpen.EINVALID, "dm_with must name an agent")
	}
	human := actor
	if in.As != "" {
		if human, err = b.off.MemberByHandle(ctx, strings.TrimPrefix(in.As, "@")); err != nil {
			return bullpen.Channel{}, err
		}
		if human.Kind != bullpen.KindHuman {
			return bullpen.Channel{}, bullpen.Errorf(bullpen.EINVALID, "as must name a human")
		}
	}
	return b.off.OpenDM(ctx, human, agent.ID)
}

// UnlinkChat removes a chat's link. Admins only.
func (b *Bridge) UnlinkChat(ctx context.Context, actor bullpen.Member, chatID int64) error {
	if err := admin(actor); err != nil {
		return err
	}
	_, err := b.db.Transact(ctx, func(tx *store.Tx) error { return tx.DeleteTelegramChat(chatID) })
	return err
}

// Outbox lists outbox rows in a state ("" for all), newest first. Admins
// only.
func (b *Bridge) Outbox(ctx context.Context, actor bullpen.Member, state string) ([]bullpen.OutboxItem, error) {
	if err := admin(actor); err != nil {
		return nil, err
	}
	switch state {
	case "", bullpen.OutboxPending, bullpen.OutboxSending, bullpen.OutboxSent, bullpen.OutboxFailed, bullpen.OutboxUncertain:
	default:
		return nil, bullpen.Errorf(bullpen.EINVALID, "state must be pending, sending, sent, failed or uncertain")
	}
	return b.db.TelegramOutbox(ctx, state, 200)
}

// Resend queues a failed or uncertain row again: an admin's call, since
// an uncertain one may arrive twice. Admins only.
func (b *Bridge) Resend(ctx context.Context, actor bullpen.Member, id int64) (bullpen.OutboxItem, error) {
	if err := admin(actor); err != nil {
		return bullpen.OutboxItem{}, err
	}
	var it bullpen.OutboxItem
	_, err := b.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		it, err = tx.RequeueTelegram(id)
		return err
	})
	if err == nil {
		b.wakeOutbox()
	}
	return it, err
}
