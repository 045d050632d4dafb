package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/go-telegram/bot/models"
)

var errUnauthorized = errors.New("telegram: token refused")

// deliverLoop sends due outbox rows, in order per chat, until ctx ends or
// Telegram refuses the token (then it calls stop).
func (b *Bridge) deliverLoop(ctx context.Context, cl *client, stop context.CancelFunc) {
	failures := 0
	for ctx.Err() == nil {
		next, err := b.deliverDue(ctx, cl)
		switch {
		case errors.Is(err, errUnauthorized):
			b.unauthorized()
			stop()
			return
		case err != nil && ctx.Err() == nil:
			b.log.Error("telegram: outbox", "err", err)
			failures++
			next = b.now().Add(b.backoff(failures))
		case err == nil:
			failures = 0
		}
		if next.IsZero() {
			select {
			case <-b.poke:
			case <-ctx.Done():
				return
			}
			continue
		}
		if d := next.Sub(b.now()); d > 0 {
			if b.cfg.Sleep != nil {
				if b.cfg.Sleep(ctx, d) != nil {
					return
				}
				continue
			}
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-b.poke:
			case <-ctx.Done():
			}
			t.Stop()
		}
	}
}

// deliverDue sends every pending row that is due, the oldest first, one
// chat's rows in order (a chat waiting for a retry holds its later rows).
// It returns when the next row falls due: zero when none is waiting.
func (b *Bridge) deliverDue(ctx context.Context, cl *client) (time.Time, error) {
	b.mu.Lock()
	paused := b.pausedUntil
	b.mu.Unlock()
	if now := b.now(); now.Before(paused) {
		return paused, nil
	}
	items, err := b.db.PendingTelegram(ctx, 200)
	if err != nil {
		return time.Time{}, err
	}
	held := map[int64]bool{}
	var next time.Time
	for _, it := range items {
		if ctx.Err() != nil {
			return time.Time{}, ctx.Err()
		}
		if held[it.ChatID] {
			continue
		}
		if it.NextAttemptAt.After(b.now()) {
			held[it.ChatID] = true
			next = earliest(next, it.NextAttemptAt)
			continue
		}
		retryAt, err := b.deliver(ctx, cl, it)
		if err != nil {
			return time.Time{}, err
		}
		if !retryAt.IsZero() {
			held[it.ChatID] = true
			next = earliest(next, retryAt)
			b.mu.Lock()
			paused = b.pausedUntil
			b.mu.Unlock()
			if b.now().Before(paused) {
				return paused, nil
			}
		}
	}
	if len(items) == 200 {
		return b.now(), nil
	}
	return next, nil
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// deliver makes one outbox call. It returns when to retry (zero when the
// row is done: sent, failed or uncertain).
func (b *Bridge) deliver(ctx context.Context, cl *client, it bullpen.OutboxItem) (time.Time, error) {
	var claimed bool
	if _, err := b.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		claimed, err = tx.ClaimTelegram(it.ID)
		return err
	}); err != nil || !claimed {
		return time.Time{}, err
	}
	it.Attempts++
	// The call is not cut off by a shutdown: that would leave it uncertain.
	callCtx, done := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer done()
	var tgID int64
	var info *callInfo
	var err error
	switch it.Method {
	case bullpen.OutboxEditMarkup:
		tgIDs, lerr := b.db.TelegramMessagesFor(ctx, it.ChatID, 0, it.ApprovalID)
		if lerr != nil {
			return time.Time{}, b.end(ctx, it, bullpen.OutboxPending, b.now().Add(b.backoff(it.Attempts)), lerr.Error())
		}
		if len(tgIDs) == 0 {
			return time.Time{}, b.end(ctx, it, bullpen.OutboxFailed, time.Time{}, "the approval's message was never delivered to this chat")
		}
		for _, t := range tgIDs {
			if info, err = cl.editMarkup(callCtx, it.ChatID, t.TgMessageID, keyboard(it.Markup)); err != nil {
				break
			}
		}
	default:
		tgID, info, err = cl.sendHTML(callCtx, it.ChatID, it.Text, it.ReplyTo, keyboard(it.Markup))
	}
	out, wait := classify(err, info)
	if out == outcomeRejected && it.Method == bullpen.OutboxEditMarkup && err != nil && containsFold(err.Error(), "message is not modified") {
		out = outcomeOK
	}
	msg := ""
	if err != nil {
		msg = redact(err.Error(), cl.token)
	}
	switch out {
	case outcomeOK:
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, err := b.db.Transact(wctx, func(tx *store.Tx) error { return tx.MarkTelegramSent(it.ID, tgID) })
		return time.Time{}, err
	case outcomeRateLimited:
		until := b.now().Add(wait)
		b.mu.Lock()
		b.pausedUntil = until
		b.mu.Unlock()
		b.log.Warn("telegram: rate limited", "retry_after", wait)
		return until, b.end(ctx, it, bullpen.OutboxPending, until, msg)
	case outcomeRetry:
		at := b.now().Add(b.backoff(it.Attempts - 1))
		return at, b.end(ctx, it, bullpen.OutboxPending, at, msg)
	case outcomeUnauthorized:
		if err := b.end(ctx, it, bullpen.OutboxPending, b.now(), msg); err != nil {
			return time.Time{}, err
		}
		return time.Time{}, errUnauthorized
	case outcomeRejected:
		b.log.Warn("telegram: Telegram refused a message", "chat", it.ChatID, "err", msg)
		return time.Time{}, b.end(ctx, it, bullpen.OutboxFailed, time.Time{}, msg)
	}
	b.log.Warn("telegram: no answer to a sent request; not resending", "outbox", it.ID, "err", msg)
	return time.Time{}, b.end(ctx, it, bullpen.OutboxUncertain, time.Time{}, msg)
}

// end records how a claimed row's call ended. It uses a context of its
// own so that a shutdown during the call still records the outcome.
func (b *Bridge) end(ctx context.Context, it bullpen.OutboxItem, state string, retryAt time.Time, msg string) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, err := b.db.Transact(wctx, func(tx *store.Tx) error {
		if state == bullpen.OutboxPending {
			return tx.RetryTelegram(it.ID, retryAt, msg)
		}
		return tx.SetTelegramState(it.ID, state, msg)
	})
	return err
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// keyboard decodes a stored inline keyboard.
func keyboard(markup string) *models.InlineKeyboardMarkup {
	if markup == "" {
		return nil
	}
	var k models.InlineKeyboardMarkup
	if json.Unmarshal([]byte(markup), &k) != nil {
		return nil
	}
	return &k
}
