package telegram_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
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
)

const token = "123456:TEST-abcdefghijklmnopqrstuvwxyz"

// Telegram users and chats of the tests.
var (
	aliceTG    = tgtest.User{ID: 1001, FirstName: "Alice", Username: "alice_tg"}
	bobTG      = tgtest.User{ID: 1002, FirstName: "Bob", Username: "bob_tg"}
	strangerTG = tgtest.User{ID: 6666, FirstName: "Eve", Username: "eve"}
	aliceChat  = tgtest.Chat{ID: 1001, Type: "private", FirstName: "Alice", Username: "alice_tg"}
	eveChat    = tgtest.Chat{ID: 6666, Type: "private", FirstName: "Eve", Username: "eve"}
	groupChat  = tgtest.Chat{ID: -100500, Type: "supergroup", Title: "Launch team"}
)

// fakeClock runs ahead of real time by what the bridge slept, so retries
// and retry_after take no real time. It records every sleep.
type fakeClock struct {
	mu     sync.Mutex
	ahead  time.Duration
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.ahead)
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.ahead += d
	c.mu.Unlock()
	time.Sleep(time.Millisecond) // let other goroutines run
	return ctx.Err()
}

func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// harness is an office on a real database with a bridge talking to a fake
// Bot API.
type harness struct {
	t       *testing.T
	scfg    store.Config
	db      *store.DB
	off     *office.Office
	br      *telegram.Bridge
	tg      *tgtest.Server
	clock   *fakeClock
	admin   bullpen.Member
	alice   bullpen.Member // allowlisted approver (aliceTG)
	bob     bullpen.Member // allowlisted, not an approver (bobTG)
	general bullpen.Channel
	// setup, when set, adjusts the bridge's config at each start.
	setup func(h *harness, cfg *telegram.Config)
	// closers run before the database closes, newest first.
	closers []func()
}

func newHarness(t *testing.T, dialect string, setup func(h *harness, cfg *telegram.Config)) *harness {
	t.Helper()
	tg, err := tgtest.New(token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	h := &harness{t: t, scfg: storetest.Config(t, dialect), tg: tg, clock: &fakeClock{}, setup: setup}
	h.openOffice()
	ctx := context.Background()
	tok, err := h.off.Bootstrap(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	if h.admin, err = h.off.Authenticate(ctx, tok); err != nil {
		t.Fatal(err)
	}
	h.alice = h.member("alice", "Alice", bullpen.KindHuman)
	h.bob = h.member("bob", "Bob", bullpen.KindHuman)
	if h.general, err = h.off.ChannelByName(ctx, h.admin, bullpen.GeneralChannel); err != nil {
		t.Fatal(err)
	}
	h.startBridge()
	if _, err := h.br.PutUser(ctx, h.admin, bullpen.TelegramUserInput{TelegramUserID: aliceTG.ID, Handle: "alice", CanApprove: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.br.PutUser(ctx, h.admin, bullpen.TelegramUserInput{TelegramUserID: bobTG.ID, Handle: "bob"}); err != nil {
		t.Fatal(err)
	}
	tokenCopy := token
	st, err := h.br.Configure(ctx, h.admin, bullpen.TelegramSettings{Token: &tokenCopy})
	if err != nil {
		t.Fatalf("Configure: %v", err)
	}
	if st.State != telegram.StateRunning {
		t.Fatalf("bridge state after Configure = %q (%s), want running", st.State, st.Error)
	}
	return h
}

func (h *harness) openOffice() {
	h.t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, h.scfg)
	if err != nil {
		h.t.Fatal(err)
	}
	off, err := office.New(ctx, db, office.Config{})
	if err != nil {
		h.t.Fatal(err)
	}
	h.db, h.off = db, off
}

// startBridge starts a bridge on the open office.
func (h *harness) startBridge() {
	h.t.Helper()
	cfg := telegram.Config{Office: h.off, DB: h.db, ServerURL: h.tg.URL, PollTimeout: 2 * time.Second,
		Now: h.clock.Now, Sleep: h.clock.Sleep, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if h.setup != nil {
		h.setup(h, &cfg)
	}
	br, err := telegram.New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := br.Start(context.Background()); err != nil {
		h.t.Fatalf("Start: %v", err)
	}
	h.br = br
	h.t.Cleanup(h.stop)
}

// stop closes the bridge, the extra services and the database (a process
// exit); harmless twice.
func (h *harness) stop() {
	if h.br == nil {
		return
	}
	h.br.Close()
	for i := len(h.closers) - 1; i >= 0; i-- {
		h.closers[i]()
	}
	h.closers = nil
	h.db.Close()
	h.br = nil
}

// restart is a process restart: everything closes and opens again on the
// same database.
func (h *harness) restart() {
	h.t.Helper()
	h.stop()
	h.openOffice()
	h.startBridge()
	h.waitState(telegram.StateRunning)
}

func (h *harness) member(handle, name string, kind bullpen.MemberKind) bullpen.Member {
	h.t.Helper()
	m, err := h.off.CreateMember(context.Background(), h.admin, bullpen.MemberInput{Handle: handle, DisplayName: name, Kind: kind})
	if err != nil {
		h.t.Fatalf("CreateMember(%s): %v", handle, err)
	}
	return m
}

func (h *harness) post(actor bullpen.Member, channel, thread int64, body, source string) bullpen.Message {
	h.t.Helper()
	m, err := h.off.Post(context.Background(), actor, bullpen.PostInput{ChannelID: channel, ThreadID: thread, Body: body, Source: source})
	if err != nil {
		h.t.Fatalf("Post(%q): %v", clip(body), err)
	}
	return m
}

func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("timed out waiting for %s", what)
}

func (h *harness) waitState(state string) view.TelegramStatus {
	h.t.Helper()
	var st view.TelegramStatus
	h.waitFor("bridge state "+state, func() bool {
		var err error
		st, err = h.br.Status(context.Background())
		return err == nil && st.State == state
	})
	return st
}

// waitSent waits for n messages sent by the bot in all.
func (h *harness) waitSent(n int) []tgtest.Sent {
	h.t.Helper()
	sent, err := h.tg.WaitSent(n, 15*time.Second)
	if err != nil {
		h.t.Fatal(err)
	}
	return sent
}

// telegramMessages returns the office messages that came from Telegram.
func (h *harness) telegramMessages() []bullpen.Message {
	h.t.Helper()
	evs, err := h.db.EventsAfter(context.Background(), 0, 100000)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []bullpen.Message
	for _, ev := range evs {
		if ev.Type != bullpen.EventMessagePosted {
			continue
		}
		var msg bullpen.Message
		if err := json.Unmarshal(ev.Payload, &msg); err != nil {
			h.t.Fatal(err)
		}
		if msg.Source == bullpen.SourceTelegram {
			out = append(out, msg)
		}
	}
	return out
}

// waitTelegramMessages waits until n office messages came from Telegram.
func (h *harness) waitTelegramMessages(n int) []bullpen.Message {
	h.t.Helper()
	var got []bullpen.Message
	h.waitFor("messages from Telegram", func() bool {
		got = h.telegramMessages()
		return len(got) >= n
	})
	return got
}

func (h *harness) outboxCounts() map[string]int64 {
	h.t.Helper()
	c, err := h.db.TelegramOutboxCounts(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
