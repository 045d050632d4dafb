package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/go-telegram/bot/models"
)

// Approvals is what the bridge needs of the agents runtime's approvals;
// *agents.Service implements it.
type Approvals interface {
	// Answer records a human's answer; an answered approval is ECONFLICT.
	Answer(ctx context.Context, actor bullpen.Member, id int64, approve bool, note string) (bullpen.Approval, error)
	// Approvals lists the approvals in a state that actor may see.
	Approvals(ctx context.Context, actor bullpen.Member, state string) ([]bullpen.Approval, error)
}

// Callback data of the buttons: "ap:<id>:y", "ap:<id>:n", and "noop" for
// the label that replaces them once answered.
const (
	cbApprove = "y"
	cbDeny    = "n"
	cbNoop    = "noop"
)

// approvalItems sends an approval request with Approve / Deny buttons.
func (b *Bridge) approvalItems(ctx context.Context, chatID int64, a bullpen.ApprovalEvent) ([]bullpen.OutboxItem, error) {
	if a.State != "" && a.State != bullpen.ApprovalPending {
		return nil, nil
	}
	var replyTo int64
	if a.ThreadID != 0 {
		root, err := b.db.TelegramMessagesFor(ctx, chatID, a.ThreadID, 0)
		if err != nil {
			return nil, err
		}
		if len(root) > 0 {
			replyTo = root[0].TgMessageID
		}
	}
	html := fmt.Sprintf("🔐 <b>@%s asks for approval #%d</b>\nTool: <code>%s</code>\n<pre>%s</pre>",
		Escape(a.Handle), a.ID, Escape(a.Tool), Escape(clipRunes(a.Arguments, 1500)))
	if a.Reason != "" {
		html += "\nWhy: <i>" + Escape(clipRunes(a.Reason, 500)) + "</i>"
	}
	kb := pendingKeyboard(a.ID)
	if a.Tool == bullpen.ApprovalTaskReview {
		html = fmt.Sprintf("📋 <b>@%s asks for a %s</b> (approval #%d)", Escape(a.Handle), Escape(clipRunes(a.Reason, 500)), a.ID)
		kb.InlineKeyboard[0][1].Text = "✍️ Request changes"
	}
	html += "\nOnly approvers can answer."
	markup, _ := json.Marshal(kb)
	return []bullpen.OutboxItem{{ChatID: chatID, Method: bullpen.OutboxSend, Text: html, Markup: string(markup),
		ReplyTo: replyTo, ApprovalID: a.ID}}, nil
}

// answeredItems replaces the buttons of the approval's messages in a chat
// with the answer.
func (b *Bridge) answeredItems(ctx context.Context, chatID int64, a bullpen.ApprovalEvent) ([]bullpen.OutboxItem, error) {
	by := "someone"
	if a.AnsweredBy != 0 {
		if m, err := b.off.Member(ctx, a.AnsweredBy); err == nil {
			by = "@" + m.Handle
		}
	}
	label := "❌ Denied by " + by
	if a.State == bullpen.ApprovalApproved {
		label = "✅ Approved by " + by
	}
	markup, _ := json.Marshal(models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{
		{{Text: label, CallbackData: cbNoop}}}})
	return []bullpen.OutboxItem{{ChatID: chatID, Method: bullpen.OutboxEditMarkup, Markup: string(markup), ApprovalID: a.ID}}, nil
}

func pendingKeyboard(id int64) models.InlineKeyboardMarkup {
	return models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{
		{Text: "✅ Approve", CallbackData: fmt.Sprintf("ap:%d:%s", id, cbApprove)},
		{Text: "❌ Deny", CallbackData: fmt.Sprintf("ap:%d:%s", id, cbDeny)},
	}}}
}

// parseCallback reads "ap:<id>:y|n".
func parseCallback(data string) (id int64, approve, ok bool) {
	parts := strings.Split(data, ":")
	if len(parts) != 3 || parts[0] != "ap" || (parts[2] != cbApprove && parts[2] != cbDeny) {
		return 0, false, false
	}
	id, err := strconv.ParseInt(parts[1], 10, 64)
	return id, parts[2] == cbApprove, err == nil && id > 0
}

// onCallback answers an approval from a button press by an allowlisted
// approver, then answers the press. The buttons change when the
// approval.answered event comes through the relay, whoever answered.
func (b *Bridge) onCallback(ctx context.Context, updateID int64, q *models.CallbackQuery) error {
	toast, err := b.callbackAnswer(ctx, q)
	if err != nil {
		return err
	}
	b.mu.Lock()
	cl := b.cl
	b.mu.Unlock()
	if cl != nil && toast != "" {
		callCtx, done := context.WithTimeout(ctx, 15*time.Second)
		if err := cl.answerCallback(callCtx, q.ID, toast); err != nil {
			b.log.Warn("telegram: answerCallbackQuery", "err", redact(err.Error(), cl.token))
		}
		done()
	}
	_, err = b.db.Transact(ctx, func(tx *store.Tx) error { return tx.AdvanceTelegramOffset(updateID) })
	return err
}

// callbackAnswer does what a press asks and returns the toast to show.
// Only internal errors come back as errors (the update is tried again).
func (b *Bridge) callbackAnswer(ctx context.Context, q *models.CallbackQuery) (string, error) {
	if q.Data == cbNoop {
		return "This approval has been answered.", nil
	}
	id, approve, ok := parseCallback(q.Data)
	if !ok {
		return "Unknown button.", nil
	}
	who, err := b.allowed(ctx, q.From.ID)
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return "Sorry, you are not on this office's allowlist.", nil
	} else if err != nil {
		return "", err
	}
	switch {
	case !who.user.CanApprove:
		return "Only approvers can answer approvals. Ask an admin.", nil
	case b.cfg.Approvals == nil:
		return "Approvals are not available in this office.", nil
	}
	a, err := b.cfg.Approvals.Answer(ctx, who.member, id, approve, "answered from Telegram")
	switch {
	case err == nil && a.State == bullpen.ApprovalApproved:
		return fmt.Sprintf("✅ Approved #%d", id), nil
	case err == nil:
		return fmt.Sprintf("❌ Denied #%d", id), nil
	case bullpen.IsCode(err, bullpen.ECONFLICT) && a.State != "":
		return fmt.Sprintf("Approval #%d was already %s.", id, a.State), nil
	case isUserError(err):
		return bullpen.ErrorMessage(err), nil
	}
	return "", err
}
