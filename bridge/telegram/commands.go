package telegram

import (
	"context"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/go-telegram/bot/models"
)

// command splits "/cmd@bot args". ok is false for plain text and for
// commands addressed to another bot.
func (b *Bridge) command(text string) (cmd, args string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	head, rest, _ := strings.Cut(strings.TrimSpace(text[1:]), " ")
	if h, r, found := strings.Cut(head, "\n"); found {
		head, rest = h, r+" "+rest
	}
	cmd, target, hasTarget := strings.Cut(head, "@")
	b.mu.Lock()
	name := b.username
	b.mu.Unlock()
	if hasTarget && name != "" && !strings.EqualFold(target, name) {
		return "", "", false
	}
	return strings.ToLower(cmd), strings.TrimSpace(rest), cmd != ""
}

// onCommand runs /start, /help, /agents, /ask, /status, /tasks, /link, /unlink.
func (b *Bridge) onCommand(ctx context.Context, updateID int64, m *models.Message, who sender, cmd, args string) error {
	switch cmd {
	case "start", "help":
		return b.answerAndAdvance(ctx, updateID, m, b.startText(ctx, m, who))
	case "agents":
		return b.answerAndAdvance(ctx, updateID, m, b.agentsText(ctx))
	case "ask":
		handle, rest, _ := strings.Cut(args, " ")
		handle = strings.TrimPrefix(strings.ToLower(handle), "@")
		if handle == "" || strings.TrimSpace(rest) == "" {
			return b.replyAndAdvance(ctx, updateID, m, "Usage: /ask handle your question — for example /ask lead what is left to do?")
		}
		agent, err := b.off.MemberByHandle(ctx, handle)
		if err != nil || agent.Kind != bullpen.KindAgent {
			return b.replyAndAdvance(ctx, updateID, m, fmt.Sprintf("There is no agent @%s. /agents lists them.", handle))
		}
		return b.postFrom(ctx, updateID, m, who, "@"+handle+" "+strings.TrimSpace(rest))
	case "status":
		return b.answerAndAdvance(ctx, updateID, m, b.statusText(ctx, m, who))
	case "tasks":
		return b.answerAndAdvance(ctx, updateID, m, b.tasksText(ctx, who))
	case "link":
		return b.link(ctx, updateID, m, who, args)
	case "unlink":
		if _, err := b.db.TelegramChat(ctx, m.Chat.ID); err != nil {
			return b.userError(ctx, updateID, m, err)
		}
		return b.answerAndAdvance(ctx, updateID, m, "This chat is no longer linked. Your next message gives it a channel of its own again, or use /link.",
			func(tx *store.Tx) error { return tx.DeleteTelegramChat(m.Chat.ID) })
	}
	return b.replyAndAdvance(ctx, updateID, m, "Unknown command. Try /help.")
}

func (b *Bridge) startText(ctx context.Context, m *models.Message, who sender) string {
	var s strings.Builder
	fmt.Fprintf(&s, "👋 This is the bot of <b>%s</b>. You write here as <b>@%s</b>.\n\n", Escape(b.cfg.OfficeName), Escape(who.member.Handle))
	s.WriteString(b.linkText(ctx, m.Chat.ID, who))
	s.WriteString("\n\n<b>Talking to agents</b>\n" +
		"• mention one: <code>@lead can you plan the launch?</code>\n" +
		"• or <code>/ask lead can you plan the launch?</code>\n" +
		"• reply to an agent's message to answer it in its thread\n" +
		"• in a chat linked to a DM with an agent, every message reaches it\n\n" +
		"<b>Commands</b>\n/agents — who works here\n/ask handle text — ask an agent\n/status — bridge and chat status\n/tasks — your open tasks and reviews\n" +
		"/link #channel, /link @agent — link this chat\n/unlink — remove the link")
	return s.String()
}

// linkText says what the chat is linked to and how to change it.
func (b *Bridge) linkText(ctx context.Context, chatID int64, who sender) string {
	c, err := b.db.TelegramChat(ctx, chatID)
	if err == nil {
		if ch, err := b.off.Channel(ctx, who.member, c.ChannelID); err == nil {
			return "This chat is linked to " + b.channelLabel(ctx, ch) + ". Messages there appear here, and yours appear there."
		}
		return "This chat is linked to a channel you cannot see."
	}
	return fmt.Sprintf("This chat (ID <code>%d</code>) is not linked yet. Your first message gives it a channel of its own; "+
		"or link it to an existing channel with <code>/link #channel</code>, or to your DM with an agent with <code>/link @lead</code>. "+
		"An admin can also link it in the dashboard's Telegram settings.", chatID)
}

// channelLabel names a channel for humans: #name, or "your DM with @x".
func (b *Bridge) channelLabel(ctx context.Context, ch bullpen.Channel) string {
	if ch.Kind != bullpen.ChannelDM {
		return "<b>#" + Escape(ch.Name) + "</b>"
	}
	var handles []string
	for _, id := range ch.MemberIDs {
		if m, err := b.off.Member(ctx, id); err == nil {
			handles = append(handles, "@"+m.Handle)
		}
	}
	return "the DM of <b>" + Escape(strings.Join(handles, " and ")) + "</b>"
}

func (b *Bridge) agentsText(ctx context.Context) string {
	members, err := b.off.Members(ctx)
	if err != nil {
		return "⚠️ Cannot list the agents right now."
	}
	var s strings.Builder
	for _, m := range members {
		if m.Kind != bullpen.KindAgent {
			continue
		}
		fmt.Fprintf(&s, "• <b>@%s</b> — %s", Escape(m.Handle), Escape(m.DisplayName))
		if m.Title != "" {
			fmt.Fprintf(&s, ", <i>%s</i>", Escape(m.Title))
		}
		if b.cfg.AgentStatus != nil {
			if st := b.cfg.AgentStatus(m.ID); st != "" {
				fmt.Fprintf(&s, " (%s)", Escape(st))
			}
		}
		if m.Muted {
			s.WriteString(" (muted)")
		}
		s.WriteByte('\n')
	}
	if s.Len() == 0 {
		return "No agents work here yet. An admin can hire some in the dashboard."
	}
	return "<b>Agents</b>\n" + s.String() + "\nMention one (<code>@handle</code>) or use <code>/ask handle text</code>."
}

func (b *Bridge) statusText(ctx context.Context, m *models.Message, who sender) string {
	st, err := b.Status(ctx)
	if err != nil {
		return "⚠️ Cannot read the bridge status right now."
	}
	var s strings.Builder
	fmt.Fprintf(&s, "<b>Bridge</b>: %s, %s", Escape(st.State), Escape(st.Mode))
	if st.BotUsername != "" {
		fmt.Fprintf(&s, " as @%s", Escape(st.BotUsername))
	}
	fmt.Fprintf(&s, "\n<b>Outbox</b>: %d waiting, %d uncertain, %d failed\n", st.Outbox[bullpen.OutboxPending],
		st.Outbox[bullpen.OutboxUncertain], st.Outbox[bullpen.OutboxFailed])
	fmt.Fprintf(&s, "<b>You</b>: @%s", Escape(who.member.Handle))
	if who.user.CanApprove {
		s.WriteString(", approver")
	}
	if b.cfg.Approvals != nil {
		if list, err := b.cfg.Approvals.Approvals(ctx, who.member, bullpen.ApprovalPending); err == nil {
			fmt.Fprintf(&s, "\n<b>Approvals waiting</b>: %d", len(list))
		}
	}
	s.WriteString("\n\n" + b.linkText(ctx, m.Chat.ID, who))
	return s.String()
}

// link links the chat to "#channel", "channel" or "@agent" (the sender's
// DM with that agent).
func (b *Bridge) link(ctx context.Context, updateID int64, m *models.Message, who sender, target string) error {
	target = strings.TrimSpace(target)
	if target == "" {
		return b.replyAndAdvance(ctx, updateID, m, "Usage: /link #channel or /link @agent")
	}
	var ch bullpen.Channel
	var err error
	if handle, ok := strings.CutPrefix(target, "@"); ok {
		var agent bullpen.Member
		if agent, err = b.off.MemberByHandle(ctx, strings.ToLower(handle)); err == nil {
			if agent.Kind != bullpen.KindAgent {
				return b.replyAndAdvance(ctx, updateID, m, "Only a DM with an agent can be linked; @"+agent.Handle+" is a human.")
			}
			ch, err = b.off.OpenDM(ctx, who.member, agent.ID)
		}
	} else {
		ch, err = b.off.ChannelByName(ctx, who.member, strings.TrimPrefix(target, "#"))
	}
	if err != nil {
		return b.userError(ctx, updateID, m, err)
	}
	return b.answerAndAdvance(ctx, updateID, m, "Linked to "+b.channelLabel(ctx, ch)+".", func(tx *store.Tx) error {
		_, err := tx.PutTelegramChat(bullpen.TelegramChat{ChatID: m.Chat.ID, ChannelID: ch.ID, Type: string(m.Chat.Type), Title: chatTitle(m)})
		return err
	})
}
