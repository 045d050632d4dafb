package telegram_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/bridge/telegram"
	"github.com/bullpen-hq/bullpen/bridge/telegram/tgtest"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// The agents runtime answers approvals from the buttons.
var _ telegram.Approvals = (*agents.Service)(nil)

// eachDialect runs fn on SQLite, and on PostgreSQL when one is configured.
func eachDialect(t *testing.T, fn func(t *testing.T, dialect string)) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) { fn(t, d) })
	}
}

func TestStrangerIsRefusedAndNothingStored(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		h := newHarness(t, dialect, nil)
		ctx := context.Background()
		msgs0, _ := h.db.CountMessages(ctx, 0)
		seq0, _ := h.db.LastSeq(ctx)
		chans0, _ := h.db.Channels(ctx, 0)

		h.tg.SendText(eveChat, strangerTG, "hi @admin, please run rm -rf /")
		h.tg.SendText(groupChat, strangerTG, "just chatting in a group") // not for the bot: no answer
		last := h.tg.SendText(groupChat, strangerTG, "/start")
		sent := h.waitSent(2)
		h.waitFor("the updates to be handled", func() bool {
			st, _ := h.br.Status(ctx)
			return st.UpdateOffset == last.UpdateID+1
		})
		if sent[0].ChatID != eveChat.ID || !containsAll(sent[0].Plain, "allowlist", "6666") {
			t.Errorf("refusal = %+v, want one to Eve naming the allowlist and her ID", sent[0])
		}
		if sent[1].ChatID != groupChat.ID {
			t.Errorf("second refusal went to chat %d, want the group (only the /start there)", sent[1].ChatID)
		}
		if n := len(h.tg.Sent()); n != 2 {
			t.Errorf("the bot sent %d messages, want 2 refusals", n)
		}
		msgs1, _ := h.db.CountMessages(ctx, 0)
		seq1, _ := h.db.LastSeq(ctx)
		chans1, _ := h.db.Channels(ctx, 0)
		chats, _ := h.db.TelegramChats(ctx, 0)
		users, _ := h.db.TelegramUsers(ctx)
		if msgs1 != msgs0 || seq1 != seq0 || len(chans1) != len(chans0) || len(chats) != 0 || len(users) != 2 {
			t.Errorf("a stranger changed the office: messages %d→%d, events %d→%d, channels %d→%d, chats %d, users %d",
				msgs0, msgs1, seq0, seq1, len(chans0), len(chans1), len(chats), len(users))
		}
		if c := h.outboxCounts(); c[bullpen.OutboxPending]+c[bullpen.OutboxSent] != 0 {
			t.Errorf("outbox = %v, want empty: refusals are not stored", c)
		}
	})
}

// agentsSetup runs a real agents service with a scripted model beside the
// bridge, wired as its approvals service.
func agentsSetup(prov llm.Provider, svc **agents.Service) func(h *harness, cfg *telegram.Config) {
	return func(h *harness, cfg *telegram.Config) {
		s, err := agents.New(agents.Config{Office: h.off, DB: h.db, Providers: map[string]llm.Provider{"scripted": prov},
			DefaultProvider: "scripted", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			h.t.Fatal(err)
		}
		if err := s.Start(context.Background()); err != nil {
			h.t.Fatal(err)
		}
		h.closers = append(h.closers, s.Close)
		cfg.Approvals = s
		cfg.AgentStatus = func(id int64) string { return s.Status(id).State }
		*svc = s
	}
}

func TestMentionWakesAgentAndReplyArrives(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		prov := scripted.NewSteps(
			scripted.Step{Text: "Here is the plan: **1.** ship the beta, **2.** write the notes."},
			scripted.Step{Text: "The budget is 5k."},
		)
		var svc *agents.Service
		h := newHarness(t, dialect, agentsSetup(prov, &svc))
		ctx := context.Background()
		hired, err := svc.Hire(ctx, h.admin, bullpen.HireInput{Role: "starter/lead"})
		if err != nil {
			t.Fatal(err)
		}
		if hired.Agent.Handle != "lead" {
			t.Fatalf("hired @%s, want @lead", hired.Agent.Handle)
		}

		ask := h.tg.SendText(aliceChat, aliceTG, "@lead please plan the launch")
		in := h.waitTelegramMessages(1)[0]
		if in.AuthorID != h.alice.ID || in.Source != bullpen.SourceTelegram || !containsString(in.Mentions, "lead") {
			t.Fatalf("office message = author %d, source %q, mentions %v; want alice, telegram, [lead]", in.AuthorID, in.Source, in.Mentions)
		}
		ch, err := h.db.Channel(ctx, in.ChannelID)
		if err != nil || ch.Name != "tg-alice-tg" || !strings.Contains(ch.Topic, "1001") {
			t.Fatalf("the chat's channel = %q (topic %q), want its own tg-alice-tg", ch.Name, ch.Topic)
		}

		answer := h.waitSent(1)[0]
		if answer.ChatID != aliceChat.ID || !containsAll(answer.Plain, "Lead", "Here is the plan") {
			t.Fatalf("reply in Telegram = %+v, want Lead's plan in Alice's chat", answer)
		}
		if !strings.Contains(answer.Text, "<b>1.</b>") || answer.ParseMode != "HTML" || answer.ContentType != "multipart/form-data" {
			t.Errorf("reply sent as %q (%s, %s), want Markdown rendered to HTML in a multipart request", answer.Text, answer.ParseMode, answer.ContentType)
		}
		if answer.ReplyTo != ask.Message.MessageID {
			t.Errorf("reply answers Telegram message %d, want the question %d", answer.ReplyTo, ask.Message.MessageID)
		}

		// A reply to the agent's message addresses the agent in its thread.
		h.waitFor("the outbox to record the answer", func() bool { return h.outboxCounts()[bullpen.OutboxSent] == 1 })
		h.tg.Reply(aliceChat, aliceTG, "and the budget?", answer.MessageID)
		follow := h.waitTelegramMessages(2)[1]
		if follow.ThreadID != in.ID || follow.Body != "@lead and the budget?" {
			t.Errorf("reply became %q in thread %d, want \"@lead and the budget?\" in thread %d", follow.Body, follow.ThreadID, in.ID)
		}
		second := h.waitSent(2)[1]
		if !strings.Contains(second.Plain, "The budget is 5k.") {
			t.Errorf("second answer = %q", second.Plain)
		}
		for _, s := range h.tg.Sent() {
			if strings.Contains(s.Plain, "please plan the launch") || strings.Contains(s.Plain, "and the budget?") {
				t.Errorf("Alice's own message was echoed back: %q", s.Plain)
			}
		}
	})
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	h := newHarness(t, store.SQLite, nil)
	ctx := context.Background()
	lead := h.member("lead", "Lead", bullpen.KindAgent)
	if _, err := h.br.LinkChat(ctx, h.admin, groupChat.ID, bullpen.TelegramLinkInput{Channel: "general"}); err != nil {
		t.Fatal(err)
	}
	h.tg.FailNext("sendMessage", 1, 429, 7)
	h.post(lead, h.general.ID, 0, "Deploy finished.", bullpen.SourceAgent)
	sent := h.waitSent(1)
	if !strings.Contains(sent[0].Plain, "Deploy finished.") {
		t.Fatalf("sent %q", sent[0].Plain)
	}
	var statuses []int
	for _, c := range h.tg.Calls() {
		if c.Method == "sendMessage" {
			statuses = append(statuses, c.Status)
		}
	}
	if fmt.Sprint(statuses) != "[429 200]" {
		t.Errorf("sendMessage statuses = %v, want [429 200]", statuses)
	}
	waited := false
	for _, d := range h.clock.Sleeps() {
		if d > 6*time.Second && d <= 7*time.Second {
			waited = true
		}
	}
	if !waited {
		t.Errorf("sleeps = %v, want one of retry_after (7s)", h.clock.Sleeps())
	}
	h.waitFor("the outbox to record it", func() bool { return h.outboxCounts()[bullpen.OutboxSent] == 1 })
	items, _ := h.db.TelegramOutbox(ctx, bullpen.OutboxSent, 10)
	if len(items) != 1 || items[0].Attempts != 2 {
		t.Errorf("outbox = %+v, want one row sent on its second attempt", items)
	}
}

func TestOutboxDeliveredExactlyOnceAfterRestart(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		h := newHarness(t, dialect, nil)
		ctx := context.Background()
		lead := h.member("lead", "Lead", bullpen.KindAgent)
		if _, err := h.br.LinkChat(ctx, h.admin, groupChat.ID, bullpen.TelegramLinkInput{Channel: "general"}); err != nil {
			t.Fatal(err)
		}
		// Telegram refuses the token on the first send: the bridge stops
		// with the row still in the outbox, and a clear status.
		h.tg.FailNext("sendMessage", 1, 401, 0)
		h.post(lead, h.general.ID, 0, "first", bullpen.SourceAgent)
		st := h.waitState(telegram.StateError)
		if !strings.Contains(st.Error, "401") {
			t.Errorf("status error = %q, want it to name the 401", st.Error)
		}
		h.waitFor("the row back in the outbox", func() bool { return h.outboxCounts()[bullpen.OutboxPending] == 1 })
		h.post(lead, h.general.ID, 0, "second", bullpen.SourceAgent)
		h.post(lead, h.general.ID, 0, "third", bullpen.SourceAgent)

		h.stop()
		// A row that a crashed process was sending: it may have arrived,
		// so it must not be sent again on its own.
		db, err := store.Open(ctx, h.scfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.Transact(ctx, func(tx *store.Tx) error {
			return tx.EnqueueTelegram(bullpen.OutboxItem{ChatID: groupChat.ID, Text: "in flight at the crash"})
		})
		if err != nil {
			t.Fatal(err)
		}
		items, err := db.PendingTelegram(ctx, 100)
		if err != nil || len(items) < 2 || items[len(items)-1].Text != "in flight at the crash" {
			t.Fatalf("pending rows = %+v (%v), want first and the new one", items, err)
		}
		if _, err = db.Transact(ctx, func(tx *store.Tx) error { _, err := tx.ClaimTelegram(items[len(items)-1].ID); return err }); err != nil {
			t.Fatal(err)
		}
		db.Close()

		h.restart()
		h.waitSent(3)
		h.waitFor("an idle outbox", func() bool { return h.outboxCounts()[bullpen.OutboxPending] == 0 })
		time.Sleep(100 * time.Millisecond)
		sent := h.tg.Sent()
		var texts []string
		for _, s := range sent {
			texts = append(texts, strings.TrimPrefix(s.Plain, "🤖 Lead @lead\n"))
		}
		if fmt.Sprint(texts) != "[first second third]" {
			t.Errorf("delivered %q, want first, second, third once each, in order", texts)
		}
		c := h.outboxCounts()
		if c[bullpen.OutboxSent] != 3 || c[bullpen.OutboxUncertain] != 1 {
			t.Errorf("outbox = %v, want 3 sent and the in-flight row uncertain", c)
		}
	})
}

func TestLongReplyArrivesAsTwoMessages(t *testing.T) {
	h := newHarness(t, store.SQLite, nil)
	ctx := context.Background()
	lead := h.member("lead", "Lead", bullpen.KindAgent)
	if _, err := h.br.LinkChat(ctx, h.admin, aliceChat.ID, bullpen.TelegramLinkInput{Channel: "general"}); err != nil {
		t.Fatal(err)
	}
	var paras []string
	for i := 0; len(strings.Join(paras, "\n\n")) < 6000; i++ {
		paras = append(paras, fmt.Sprintf("Paragraph %d. ", i)+strings.Repeat("lorem ipsum ", 40))
	}
	body := strings.Join(paras, "\n\n")[:6000]
	h.post(lead, h.general.ID, 0, body, bullpen.SourceAgent)
	sent := h.waitSent(2)
	time.Sleep(50 * time.Millisecond)
	if n := len(h.tg.Sent()); n != 2 {
		t.Fatalf("a 6,000-character reply arrived as %d messages, want 2", n)
	}
	joined := strings.TrimPrefix(sent[0].Plain, "🤖 Lead @lead\n") + "\n\n" + sent[1].Plain
	if strings.Join(strings.Fields(joined), " ") != strings.Join(strings.Fields(body), " ") {
		t.Error("the two parts do not carry the whole reply")
	}
	if !strings.HasSuffix(strings.TrimSpace(sent[0].Plain), ".") && !strings.HasSuffix(strings.TrimSpace(sent[0].Plain), " ") {
		t.Logf("first part ends with %q", sent[0].Plain[len(sent[0].Plain)-20:])
	}
	if !strings.HasPrefix(sent[1].Plain, "Paragraph ") {
		t.Errorf("the second part starts %q, want a paragraph boundary", sent[1].Plain[:20])
	}
}

func TestApprovalAnsweredWithButton(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		// The agent's role needs approval for list_members: its first step
		// asks for it, its second (after the answer) reports.
		prov := scripted.NewSteps(
			scripted.Step{ToolCalls: []llm.ToolCall{{Name: "list_members", Arguments: json.RawMessage(`{}`)}}},
			scripted.Step{Text: "The roster is ready."},
		)
		var svc *agents.Service
		h := newHarness(t, dialect, agentsSetup(prov, &svc))
		ctx := context.Background()
		_, err := svc.Hire(ctx, h.admin, bullpen.HireInput{Spec: &bullpen.Role{Handle: "ops", Name: "Ops", Title: "Operations",
			Tools: []string{"post_message", "list_members"}, Approvals: []string{"list_members"}, Prompt: "You run operations."}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.br.LinkChat(ctx, h.admin, groupChat.ID, bullpen.TelegramLinkInput{Channel: "general"}); err != nil {
			t.Fatal(err)
		}
		ask := h.tg.SendText(groupChat, aliceTG, "@ops who works here?")
		msg := h.waitSent(1)[0]
		var list []bullpen.Approval
		h.waitFor("the approval", func() bool {
			list, _ = h.db.Approvals(ctx, bullpen.ApprovalPending, 10)
			return len(list) == 1
		})
		a := list[0]
		if !containsAll(msg.Plain, "@ops asks for approval", "list_members") || msg.ReplyTo != ask.Message.MessageID ||
			!containsAll(msg.Markup, fmt.Sprintf(`"ap:%d:y"`, a.ID), fmt.Sprintf(`"ap:%d:n"`, a.ID), "Approve", "Deny") {
			t.Fatalf("approval message = %q (reply to %d) with markup %s", msg.Plain, msg.ReplyTo, msg.Markup)
		}
		h.waitFor("the outbox to record it", func() bool { return h.outboxCounts()[bullpen.OutboxSent] == 1 })

		answers := func(n int) []tgtest.Answer {
			h.waitFor("callback answers", func() bool { return len(h.tg.Answers()) >= n })
			return h.tg.Answers()
		}
		h.tg.Press(groupChat, strangerTG, msg.MessageID, fmt.Sprintf("ap:%d:y", a.ID))
		h.tg.Press(groupChat, bobTG, msg.MessageID, fmt.Sprintf("ap:%d:y", a.ID))
		got := answers(2)
		if !strings.Contains(got[0].Text, "allowlist") || !strings.Contains(got[1].Text, "Only approvers") {
			t.Errorf("answers to a stranger and a non-approver = %q, %q", got[0].Text, got[1].Text)
		}
		if st, _ := h.db.Approval(ctx, a.ID); st.State != bullpen.ApprovalPending {
			t.Fatalf("approval is %s after presses by people who may not answer it", st.State)
		}

		h.tg.Press(groupChat, aliceTG, msg.MessageID, fmt.Sprintf("ap:%d:y", a.ID))
		if got := answers(3)[2]; !strings.Contains(got.Text, fmt.Sprintf("Approved #%d", a.ID)) {
			t.Errorf("answer to Alice = %q", got.Text)
		}
		st, err := h.db.Approval(ctx, a.ID)
		if err != nil || st.State != bullpen.ApprovalApproved || st.AnsweredBy != h.alice.ID {
			t.Fatalf("approval = %+v (%v), want approved by alice", st, err)
		}
		h.waitFor("the buttons to change", func() bool { return len(h.tg.Edits()) == 1 })
		e := h.tg.Edits()[0]
		if e.MessageID != msg.MessageID || !strings.Contains(e.Markup, "Approved by @alice") {
			t.Errorf("edit = %+v, want the approval message's buttons replaced by \"Approved by @alice\"", e)
		}
		// The answer woke the agent; its report reaches the chat.
		if report := h.waitSent(2)[1]; !strings.Contains(report.Plain, "The roster is ready.") {
			t.Errorf("after the approval the chat got %q", report.Plain)
		}

		// A second press finds it answered.
		h.tg.Press(groupChat, aliceTG, msg.MessageID, fmt.Sprintf("ap:%d:n", a.ID))
		if got := answers(4)[3]; !strings.Contains(got.Text, "already approved") {
			t.Errorf("answer to a late press = %q", got.Text)
		}
		for _, s := range h.tg.Sent() {
			if strings.Contains(s.Plain, "POST /api/v1/approvals") {
				t.Errorf("the dashboard notice was relayed beside the buttons: %q", s.Plain)
			}
		}
	})
}

func TestOffsetSurvivesRestart(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		h := newHarness(t, dialect, nil)
		first := h.tg.SendText(aliceChat, aliceTG, "first message")
		h.waitTelegramMessages(1)
		h.stop()
		// Telegram still holds the first update, as if never confirmed,
		// and a second one arrives while the office is down.
		h.tg.Requeue(first)
		second := h.tg.SendText(aliceChat, aliceTG, "second message")
		h.restart()
		h.waitTelegramMessages(2)
		time.Sleep(100 * time.Millisecond)
		got := h.telegramMessages()
		if len(got) != 2 || got[0].Body != "first message" || got[1].Body != "second message" {
			var bodies []string
			for _, m := range got {
				bodies = append(bodies, m.Body)
			}
			t.Fatalf("messages from Telegram = %q, want the first and the second once each", bodies)
		}
		if n := h.tg.Served(first.UpdateID); n != 1 {
			t.Errorf("the first update was served %d times, want 1", n)
		}
		st, _ := h.br.Status(context.Background())
		if st.UpdateOffset != second.UpdateID+1 {
			t.Errorf("offset = %d, want %d", st.UpdateOffset, second.UpdateID+1)
		}
	})
}

func TestUnauthorizedToken(t *testing.T) {
	h := newHarness(t, store.SQLite, nil)
	ctx := context.Background()
	wrong := "999:WRONG-abcdefghijklmnopqrstuvwxyz"
	_, err := h.br.Configure(ctx, h.admin, bullpen.TelegramSettings{Token: &wrong})
	if !bullpen.IsCode(err, bullpen.EINVALID) || !strings.Contains(bullpen.ErrorMessage(err), "401") {
		t.Errorf("Configure(wrong token) = %v, want EINVALID naming the 401", err)
	}
	if st, _ := h.br.Status(ctx); st.State != telegram.StateRunning || st.TokenHint != "…wxyz" {
		t.Errorf("after a refused token the bridge is %q with hint %q; want it running on the old one", st.State, st.TokenHint)
	}

	// The token is revoked while the bridge runs.
	h.tg.SetToken("123456:NEW-abcdefghijklmnopqrstuvwxyz")
	st := h.waitState(telegram.StateError)
	if !containsAll(st.Error, "401", "BotFather") {
		t.Errorf("status error = %q, want a clear 401 message", st.Error)
	}
	raw, _ := json.Marshal(st)
	if strings.Contains(string(raw), token) {
		t.Errorf("status shows the token: %s", raw)
	}
	newToken := "123456:NEW-abcdefghijklmnopqrstuvwxyz"
	if st, err := h.br.Configure(ctx, h.admin, bullpen.TelegramSettings{Token: &newToken}); err != nil || st.State != telegram.StateRunning {
		t.Errorf("Configure(new token) = %q, %v; want running", st.State, err)
	}
	if _, err := h.br.Configure(ctx, h.alice, bullpen.TelegramSettings{Token: &newToken}); !bullpen.IsCode(err, bullpen.EFORBIDDEN) {
		t.Errorf("Configure by a non-admin = %v, want EFORBIDDEN", err)
	}
}

func TestCommands(t *testing.T) {
	h := newHarness(t, store.SQLite, nil)
	ctx := context.Background()
	h.member("lead", "Lead", bullpen.KindAgent)
	send := func(chat tgtest.Chat, text string) tgtest.Sent {
		t.Helper()
		n := len(h.tg.Sent())
		h.tg.SendText(chat, aliceTG, text)
		return h.waitSent(n + 1)[n]
	}
	if s := send(groupChat, "/start@bullpen_test_bot"); !containsAll(s.Plain, "not linked yet", "-100500", "/link") {
		t.Errorf("/start = %q", s.Plain)
	}
	if s := send(groupChat, "/agents"); !containsAll(s.Plain, "@lead", "Lead") {
		t.Errorf("/agents = %q", s.Plain)
	}
	if s := send(groupChat, "/link #general"); !strings.Contains(s.Plain, "Linked to #general") {
		t.Errorf("/link = %q", s.Plain)
	}
	if c, err := h.db.TelegramChat(ctx, groupChat.ID); err != nil || c.ChannelID != h.general.ID {
		t.Fatalf("chat link = %+v, %v; want #general", c, err)
	}
	h.tg.SendText(groupChat, aliceTG, "/ask lead what is left?")
	if m := h.waitTelegramMessages(1)[0]; m.Body != "@lead what is left?" || m.ChannelID != h.general.ID {
		t.Errorf("/ask posted %q in channel %d", m.Body, m.ChannelID)
	}
	if s := send(groupChat, "/status"); !containsAll(s.Plain, "running", "@alice", "#general") {
		t.Errorf("/status = %q", s.Plain)
	}
	if s := send(groupChat, "/ask nobody hi"); !strings.Contains(s.Plain, "no agent @nobody") {
		t.Errorf("/ask nobody = %q", s.Plain)
	}
	if s := send(aliceChat, "/link @lead"); !containsAll(s.Plain, "Linked to the DM", "@alice", "@lead") {
		t.Errorf("/link @lead = %q", s.Plain)
	}
	// In a chat linked to a DM with an agent, a plain message is a DM.
	h.tg.SendText(aliceChat, aliceTG, "hello there")
	m := h.waitTelegramMessages(2)[1]
	ch, _ := h.db.Channel(ctx, m.ChannelID)
	if ch.Kind != bullpen.ChannelDM || len(m.Mentions) != 0 {
		t.Errorf("message went to %s channel %q", ch.Kind, ch.Name)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
