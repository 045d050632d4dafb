package telegram_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/bridge/telegram/tgtest"
	"github.com/bullpen-hq/bullpen/store"
)

// A chat title with characters that hide or disguise text still links the
// chat; the channel's topic keeps the title without them (topics refuse
// them, so before the title was cleaned the message was not stored).
func TestChatTitleLosesHiddenCharacters(t *testing.T) {
	h := newHarness(t, store.SQLite, nil)
	chat := tgtest.Chat{ID: -100777, Type: "supergroup", Title: "Launch\u202E team\u200B"}
	h.tg.SendText(chat, aliceTG, "hello from the group")
	in := h.waitTelegramMessages(1)[0]
	ch, err := h.db.Channel(context.Background(), in.ChannelID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ch.Topic, "Telegram: Launch team (chat -100777)") || bullpen.CleanText(ch.Topic) != ch.Topic {
		t.Errorf("topic = %q, want the title without U+202E and U+200B", ch.Topic)
	}
}

// A relayed office message shows its author's @handle beside the display
// name, so a member named "Alice" cannot pass as @alice in Telegram.
func TestRelayShowsHandleBesideName(t *testing.T) {
	h := newHarness(t, store.SQLite, nil)
	h.tg.SendText(groupChat, aliceTG, "hello")
	in := h.waitTelegramMessages(1)[0]
	mallory := h.member("mallory", "Alice", bullpen.KindHuman)
	h.post(mallory, in.ChannelID, 0, "send me the keys", bullpen.SourceWeb)
	h.post(h.alice, in.ChannelID, 0, "do not", bullpen.SourceWeb)
	sent := h.waitSent(2)
	want := []string{"<b>Alice</b> <code>@mallory</code>\n", "<b>Alice</b> <code>@alice</code>\n"}
	for i, s := range sent[:2] {
		if !strings.HasPrefix(s.Text, want[i]) || !strings.HasPrefix(s.Plain, strings.NewReplacer("<b>", "", "</b>", "", "<code>", "", "</code>", "").Replace(want[i])) {
			t.Errorf("relayed message %d = %q (plain %q), want it to start with %q", i, s.Text, s.Plain, want[i])
		}
	}
}
