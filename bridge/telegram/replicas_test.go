package telegram_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/bridge/telegram"
	"github.com/bullpen-hq/bullpen/bridge/telegram/tgtest"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"github.com/bullpen-hq/bullpen/view"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// replica is one server process's office and bridge on a shared database.
type replica struct {
	t   *testing.T
	db  *store.DB
	off *office.Office
	br  *telegram.Bridge
}

// sharedPostgres returns a fresh PostgreSQL database for replicas; it
// skips without a server (and fails under CI=true, by storetest).
func sharedPostgres(t *testing.T) store.Config {
	t.Helper()
	if !slices.Contains(storetest.Dialects(t), store.Postgres) {
		t.Skipf("%s not set: replicas need PostgreSQL", storetest.EnvPostgres)
	}
	return storetest.Config(t, store.Postgres)
}

// openReplica opens a store handle, an office and a started bridge, as
// one more server process with BULLPEN_SHARED_DATABASE=on would.
func openReplica(t *testing.T, scfg store.Config, tg *tgtest.Server) *replica {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, scfg)
	if err != nil {
		t.Fatal(err)
	}
	off, err := office.New(ctx, db, office.Config{})
	if err != nil {
		t.Fatal(err)
	}
	br, err := telegram.New(telegram.Config{Office: off, DB: db, ServerURL: tg.URL, PollTimeout: 2 * time.Second, Shared: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := br.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	r := &replica{t: t, db: db, off: off, br: br}
	t.Cleanup(r.close)
	return r
}

// close stops the replica as its process's exit would: its session, and
// so its lock, ends.
func (r *replica) close() {
	if r.br == nil {
		return
	}
	r.br.Close()
	r.db.Close()
	r.br = nil
}

func (r *replica) waitState(state string) {
	r.t.Helper()
	waitUntil(r.t, "bridge state "+state, func() bool {
		st, err := r.br.Status(context.Background())
		return err == nil && st.State == state
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// firstReplica makes the office (admin, allowlisted alice) and a bridge
// configured with mode ("" for polling), and returns it with the admin.
func firstReplica(t *testing.T, scfg store.Config, tg *tgtest.Server, mode, hook string) (*replica, bullpen.Member) {
	t.Helper()
	ctx := context.Background()
	a := openReplica(t, scfg, tg)
	tok, err := a.off.Bootstrap(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := a.off.Authenticate(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.off.CreateMember(ctx, admin, bullpen.MemberInput{Handle: "alice", DisplayName: "Alice", Kind: bullpen.KindHuman}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.br.PutUser(ctx, admin, bullpen.TelegramUserInput{TelegramUserID: aliceTG.ID, Handle: "alice"}); err != nil {
		t.Fatal(err)
	}
	in := bullpen.TelegramSettings{Token: ptr(token)}
	if mode != "" {
		in.Mode, in.WebhookURL = &mode, &hook
	}
	if st, err := a.br.Configure(ctx, admin, in); err != nil || st.State != telegram.StateRunning {
		t.Fatalf("Configure = %+v, %v; want running", st, err)
	}
	return a, admin
}

func ptr(s string) *string { return &s }

// linkAlice has alice write once so that her chat gets its channel, and
// returns the channel.
func linkAlice(t *testing.T, r *replica, tg *tgtest.Server) int64 {
	t.Helper()
	tg.SendText(aliceChat, aliceTG, "hello")
	var chat bullpen.TelegramChat
	waitUntil(t, "alice's chat linked", func() bool {
		var err error
		chat, err = r.db.TelegramChat(context.Background(), aliceChat.ID)
		return err == nil
	})
	return chat.ChannelID
}

// officeBodies counts the bodies of the office messages from Telegram.
func officeBodies(t *testing.T, db *store.DB) map[string]int {
	t.Helper()
	evs, err := db.EventsAfter(context.Background(), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, ev := range evs {
		var m bullpen.Message
		if ev.Type == bullpen.EventMessagePosted && json.Unmarshal(ev.Payload, &m) == nil && m.Source == bullpen.SourceTelegram {
			out[m.Body]++
		}
	}
	return out
}

// sentWith counts the messages the bot sent whose text contains key.
func sentWith(tg *tgtest.Server, key string) int {
	n := 0
	for _, s := range tg.Sent() {
		if strings.Contains(s.Plain, key) {
			n++
		}
	}
	return n
}

// exchange has alice send in-<i> from Telegram and the admin post out-<i>
// into her channel, alternately through each of offs, for i in [from, to);
// then it waits for every one and checks that each arrived exactly once.
func exchange(t *testing.T, tg *tgtest.Server, db *store.DB, admin bullpen.Member, channel int64, from, to int, offs ...*office.Office) {
	t.Helper()
	ctx := context.Background()
	for i := from; i < to; i++ {
		tg.SendText(aliceChat, aliceTG, fmt.Sprintf("in-%02d", i))
		if _, err := offs[i%len(offs)].Post(ctx, admin, bullpen.PostInput{ChannelID: channel, Body: fmt.Sprintf("out-%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "every message through", func() bool {
		in := officeBodies(t, db)
		for i := from; i < to; i++ {
			if in[fmt.Sprintf("in-%02d", i)] == 0 || sentWith(tg, fmt.Sprintf("out-%02d", i)) == 0 {
				return false
			}
		}
		c, err := db.TelegramOutboxCounts(ctx)
		return err == nil && c[bullpen.OutboxPending] == 0 && c[bullpen.OutboxSending] == 0
	})
	time.Sleep(300 * time.Millisecond) // room for a second copy to show
	in := officeBodies(t, db)
	for i := from; i < to; i++ {
		if n := in[fmt.Sprintf("in-%02d", i)]; n != 1 {
			t.Errorf("Telegram message in-%02d posted %d times, want 1", i, n)
		}
		if n := sentWith(tg, fmt.Sprintf("out-%02d", i)); n != 1 {
			t.Errorf("office message out-%02d sent to the chat %d times, want 1", i, n)
		}
	}
}

// Two server processes on one PostgreSQL database, each with a bridge:
// only one polls, relays and sends; every Telegram message is posted once
// and every office message (posted through either) reaches the chat once;
// when the leader stops, the other takes over and carries on.
func TestSharedDatabaseOneBridge(t *testing.T) {
	scfg := sharedPostgres(t)
	tg, err := tgtest.New(token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	a, admin := firstReplica(t, scfg, tg, "", "")
	b := openReplica(t, scfg, tg)
	b.waitState(telegram.StateStandby)
	channel := linkAlice(t, a, tg)

	exchange(t, tg, a.db, admin, channel, 0, 20, a.off, b.off)
	checkOnePoller(t, tg)

	a.close()
	closed := time.Now()
	b.waitState(telegram.StateRunning)
	t.Logf("the standby ran the bridge %v after the leader closed", time.Since(closed).Round(10*time.Millisecond))
	exchange(t, tg, b.db, admin, channel, 20, 30, b.off)

	c := openReplica(t, scfg, tg) // a restarted process now stands by
	c.waitState(telegram.StateStandby)
	exchange(t, tg, b.db, admin, channel, 30, 40, b.off, c.off)
	checkOnePoller(t, tg)
}

// checkOnePoller fails when two bridges ever held getUpdates at once.
func checkOnePoller(t *testing.T, tg *tgtest.Server) {
	t.Helper()
	if n := tg.MaxPollers(); n != 1 {
		t.Fatalf("%d getUpdates requests were held at once, want 1", n)
	}
}

// In webhook mode Telegram may deliver an update to any replica, and
// deliver it again: the same update handed to two replicas at once is
// posted once.
func TestSharedDatabaseWebhookUpdateOnce(t *testing.T) {
	scfg := sharedPostgres(t)
	tg, err := tgtest.New(token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	a, _ := firstReplica(t, scfg, tg, telegram.ModeWebhook, "https://bullpen.example/")
	b := openReplica(t, scfg, tg)
	b.waitState(telegram.StateStandby)
	secret := tg.Webhook().SecretToken
	ctx := context.Background()
	first := tg.NewUpdate(aliceChat, aliceTG, "hello")
	body, _ := json.Marshal(first)
	if err := a.br.HandleWebhook(ctx, secret, body); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		u := tg.NewUpdate(aliceChat, aliceTG, fmt.Sprintf("hook-%02d", i))
		body, _ := json.Marshal(u)
		var wg sync.WaitGroup
		for _, r := range []*replica{a, b, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := r.br.HandleWebhook(ctx, secret, body); err != nil {
					t.Errorf("HandleWebhook(update %d): %v", u.UpdateID, err)
				}
			}()
		}
		wg.Wait()
	}
	got := officeBodies(t, a.db)
	for i := range 20 {
		if n := got[fmt.Sprintf("hook-%02d", i)]; n != 1 {
			t.Errorf("update hook-%02d posted %d times, want 1", i, n)
		}
	}
}

// A process that starts while another runs the bridge leaves the
// leader's in-flight call alone; once it takes over, a row left mid-send
// by the stopped leader becomes uncertain and is not resent.
func TestSharedDatabaseTakeoverMarksInFlightUncertain(t *testing.T) {
	scfg := sharedPostgres(t)
	tg, err := tgtest.New(token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	a, _ := firstReplica(t, scfg, tg, "", "")
	// A call the leader is making: claimed, no answer yet.
	g, err := gorm.Open(postgres.Open(scfg.URL), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if sqlDB, err := g.DB(); err == nil {
		t.Cleanup(func() { sqlDB.Close() })
	}
	var id int64
	err = g.Raw(`INSERT INTO telegram_outbox (chat_id, method, text, markup, reply_to, part, state, attempts, next_attempt_at, last_error, tg_message_id, created_at)
		VALUES (?, 'send', 'in flight', '', 0, 0, 'sending', 1, now(), '', 0, now()) RETURNING id`, aliceChat.ID).Scan(&id).Error
	if err != nil {
		t.Fatal(err)
	}
	state := func() string {
		var s string
		if err := g.Raw("SELECT state FROM telegram_outbox WHERE id = ?", id).Scan(&s).Error; err != nil {
			t.Fatal(err)
		}
		return s
	}
	b := openReplica(t, scfg, tg)
	b.waitState(telegram.StateStandby)
	if s := state(); s != bullpen.OutboxSending {
		t.Fatalf("after a standby started, the leader's in-flight row is %q, want sending", s)
	}
	a.close()
	b.waitState(telegram.StateRunning)
	if s := state(); s != bullpen.OutboxUncertain {
		t.Fatalf("after the takeover, the stopped leader's in-flight row is %q, want uncertain", s)
	}
	if n := sentWith(tg, "in flight"); n != 0 {
		t.Errorf("the uncertain row was sent %d times, want 0", n)
	}
}

// Settings saved through a standby reach the leader: switching to
// webhook mode on the standby makes the leader register the webhook and
// stop polling.
func TestSharedDatabaseSettingsFromStandby(t *testing.T) {
	scfg := sharedPostgres(t)
	tg, err := tgtest.New(token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	a, admin := firstReplica(t, scfg, tg, "", "")
	b := openReplica(t, scfg, tg)
	b.waitState(telegram.StateStandby)
	mode, hook := telegram.ModeWebhook, "https://bullpen.example/"
	st, err := b.br.Configure(context.Background(), admin, bullpen.TelegramSettings{Mode: &mode, WebhookURL: &hook})
	if err != nil || st.Mode != telegram.ModeWebhook {
		t.Fatalf("Configure on the standby = %+v, %v", st, err)
	}
	waitUntil(t, "the leader registers the webhook", func() bool {
		wh := tg.Webhook()
		return wh != nil && wh.URL == "https://bullpen.example/telegram/webhook"
	})
	var status view.TelegramStatus
	waitUntil(t, "one bridge running, one standing by", func() bool {
		sa, errA := a.br.Status(context.Background())
		sb, errB := b.br.Status(context.Background())
		status = sb
		return errA == nil && errB == nil && (sa.State == telegram.StateRunning) != (sb.State == telegram.StateRunning) &&
			(sa.State == telegram.StateStandby || sb.State == telegram.StateStandby)
	})
	if status.Mode != telegram.ModeWebhook {
		t.Errorf("standby status mode = %q, want webhook", status.Mode)
	}
}
