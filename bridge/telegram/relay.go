package telegram

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// approvalNotice matches the system notice that agents post with each
// approval request; the bridge sends its own message with buttons instead.
var approvalNotice = regexp.MustCompile(`asks for approval #\d+`)

// relay follows the office's event feed from since and turns the events
// of linked channels into outbox rows. The rows of a batch and the cursor
// after it commit together, and only if the cursor is still where this
// relay left it, so each event is queued exactly once even should two
// relays ever run at once; the one that finds the cursor moved calls
// resign.
func (b *Bridge) relay(ctx context.Context, since int64, resign context.CancelFunc) {
	cursor := since
	feed := b.off.Subscribe(since)
	defer feed.Close()
	for {
		evs, err := feed.Next(ctx, 100)
		if err != nil {
			if ctx.Err() == nil {
				b.log.Error("telegram: relay feed", "err", err)
			}
			return
		}
		var last int64
		for _, ev := range evs {
			if ev.Seq != 0 {
				last = ev.Seq
			}
		}
		if last == 0 {
			continue
		}
		for attempt := 0; ; attempt++ {
			n, err := b.queue(ctx, evs, cursor, last)
			if err == nil {
				if n > 0 {
					b.wakeOutbox()
				}
				cursor = last
				break
			}
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, store.ErrTelegramRelayMoved) {
				b.log.Error("telegram: another relay moved the cursor; this one stops", "cursor", cursor)
				resign()
				return
			}
			b.log.Error("telegram: relay", "seq", last, "err", err)
			if b.sleep(ctx, b.backoff(attempt)) != nil {
				return
			}
		}
	}
}

// queue stores the outbox rows for evs and moves the cursor from cursor
// to last.
func (b *Bridge) queue(ctx context.Context, evs []bullpen.Event, cursor, last int64) (int, error) {
	var items []bullpen.OutboxItem
	for _, ev := range evs {
		if ev.Seq == 0 {
			continue
		}
		its, err := b.itemsFor(ctx, ev)
		if err != nil {
			return 0, err
		}
		items = append(items, its...)
	}
	_, err := b.db.Transact(ctx, func(tx *store.Tx) error {
		if err := tx.EnqueueTelegram(items...); err != nil {
			return err
		}
		return tx.MoveTelegramRelayCursor(cursor, last)
	})
	return len(items), err
}

// itemsFor returns what an event sends to the chats linked to its channel.
func (b *Bridge) itemsFor(ctx context.Context, ev bullpen.Event) ([]bullpen.OutboxItem, error) {
	switch ev.Type {
	case bullpen.EventMessagePosted, bullpen.EventApprovalRequested, bullpen.EventApprovalAnswered:
	default:
		return nil, nil
	}
	if ev.ChannelID == 0 {
		return nil, nil
	}
	chats, err := b.db.TelegramChats(ctx, ev.ChannelID)
	if err != nil || len(chats) == 0 {
		return nil, err
	}
	forChat, err := b.itemMaker(ev)
	if err != nil {
		return nil, fmt.Errorf("telegram: relay: %w", err)
	}
	var out []bullpen.OutboxItem
	for _, c := range chats {
		its, err := forChat(ctx, c.ChatID)
		if err != nil {
			return nil, err
		}
		out = append(out, its...)
	}
	return out, nil
}

// itemMaker decodes ev once and returns what makes its items for one chat.
func (b *Bridge) itemMaker(ev bullpen.Event) (func(context.Context, int64) ([]bullpen.OutboxItem, error), error) {
	if ev.Type == bullpen.EventMessagePosted {
		m, err := bullpen.MessageOf(ev)
		return func(ctx context.Context, chat int64) ([]bullpen.OutboxItem, error) {
			return b.messageItems(ctx, chat, m)
		}, err
	}
	a, err := bullpen.ApprovalOf(ev)
	if ev.Type == bullpen.EventApprovalAnswered {
		return func(ctx context.Context, chat int64) ([]bullpen.OutboxItem, error) {
			return b.answeredItems(ctx, chat, a)
		}, err
	}
	return func(ctx context.Context, chat int64) ([]bullpen.OutboxItem, error) {
		return b.approvalItems(ctx, chat, a)
	}, err
}

// messageItems relays a message to a chat with its author's name, as
// Telegram HTML split at the limit. A message that came from this very
// chat is not echoed back, and a reply in a thread answers the thread's
// root when the chat has it.
func (b *Bridge) messageItems(ctx context.Context, chatID int64, m bullpen.Message) ([]bullpen.OutboxItem, error) {
	if m.Deleted || strings.TrimSpace(m.Body) == "" {
		return nil, nil
	}
	if m.Source == bullpen.SourceSystem && approvalNotice.MatchString(m.Body) {
		return nil, nil
	}
	if m.Source == bullpen.SourceTelegram {
		seen, err := b.db.TelegramMessagesFor(ctx, chatID, m.ID, 0)
		if err != nil {
			return nil, err
		}
		for _, t := range seen {
			if t.Direction == store.TelegramIn {
				return nil, nil
			}
		}
	}
	var replyTo int64
	if m.ThreadID != 0 {
		root, err := b.db.TelegramMessagesFor(ctx, chatID, m.ThreadID, 0)
		if err != nil {
			return nil, err
		}
		if len(root) > 0 {
			replyTo = root[0].TgMessageID
		}
	}
	html := authorLine(m) + "\n" + ToHTML(m.Body)
	var out []bullpen.OutboxItem
	for i, part := range Split(html, MaxMessage) {
		it := bullpen.OutboxItem{ChatID: chatID, Method: bullpen.OutboxSend, Text: part, MessageID: m.ID, Part: i}
		if i == 0 {
			it.ReplyTo = replyTo
		}
		out = append(out, it)
	}
	return out, nil
}

// authorLine is the bold name a relayed message starts with, and the
// author's @handle beside it: display names are free text, so only the
// handle tells two "Alice"s apart. The handle is code so that Telegram
// does not link it to a Telegram user of that name.
func authorLine(m bullpen.Message) string {
	name, handle := "someone", ""
	if m.Author != nil {
		name, handle = m.Author.DisplayName, m.Author.Handle
		if m.Author.Kind == bullpen.KindAgent {
			name = "🤖 " + name
		}
	}
	if m.Source == bullpen.SourceSystem {
		name = "⚙️ " + name
	}
	line := "<b>" + Escape(name) + "</b>"
	if handle != "" {
		line += " <code>@" + Escape(handle) + "</code>"
	}
	return line
}
