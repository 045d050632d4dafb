package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/bridge/telegram"
	"github.com/bullpen-hq/bullpen/bridge/telegram/tgtest"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/wiki"
)

const tgToken = "123456:TEST-abcdefghijklmnopqrstuvwxyz"

// telegramServer is a server with a Telegram bridge talking to a fake Bot
// API.
type telegramServer struct {
	url, token string
	db         *store.DB
	tg         *tgtest.Server
}

func newTelegramServer(t *testing.T) *telegramServer {
	t.Helper()
	db, off, token := openOffice(t, store.SQLite)
	fake, err := tgtest.New(tgToken)
	if err != nil {
		t.Fatal(err)
	}
	br, err := telegram.New(telegram.Config{Office: off, DB: db, ServerURL: fake.URL, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := br.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The wiki is there so that the dashboard a browser test logs in to
	// loads without a 503 from its wiki panel.
	ts := serve(t, db, off, token, web.Config{}, web.Services{Office: off, Telegram: br, Wiki: wiki.New(db, wiki.Config{})},
		func() { br.Close() }, func() { fake.Close() })
	return &telegramServer{url: ts.URL, token: token, db: db, tg: fake}
}

func (ts *telegramServer) call(t *testing.T, method, path string, body any, out any) (int, string) {
	t.Helper()
	var r io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		r = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, ts.url+path, r)
	req.Header.Set("Authorization", "Bearer "+ts.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		json.Unmarshal(raw, out)
	}
	return resp.StatusCode, string(raw)
}

func TestTelegramSettingsAndWebhook(t *testing.T) {
	ts := newTelegramServer(t)
	var st view.TelegramStatus
	if code, _ := ts.call(t, "GET", "/api/v1/telegram", nil, &st); code != 200 || st.State != telegram.StateDisabled {
		t.Fatalf("GET /api/v1/telegram = %d %q, want 200 disabled", code, st.State)
	}
	if code, body := ts.call(t, "PUT", "/api/v1/telegram", map[string]any{"token": "nonsense"}, nil); code != 400 || !strings.Contains(body, "BotFather") {
		t.Errorf("PUT a malformed token = %d %s, want 400", code, body)
	}
	code, body := ts.call(t, "PUT", "/api/v1/telegram", map[string]any{"token": tgToken, "mode": "webhook", "webhook_url": ts.url}, &st)
	if code != 200 || st.State != telegram.StateRunning || st.TokenHint != "…wxyz" || strings.Contains(body, tgToken) {
		t.Fatalf("PUT settings = %d %s; want running, a hint and never the token", code, body)
	}
	wh := ts.tg.Webhook()
	if wh == nil || wh.URL != ts.url+bullpen.TelegramWebhookPath || len(wh.SecretToken) < 32 || wh.MaxConnections != 1 {
		t.Fatalf("registered webhook = %+v", wh)
	}
	if code, body := ts.call(t, "POST", "/api/v1/telegram/users", map[string]any{"telegram_user_id": 42, "handle": "admin", "can_approve": true}, nil); code != 201 {
		t.Fatalf("POST user = %d %s", code, body)
	}

	chat, from := tgtest.Chat{ID: 42, Type: "private", FirstName: "Ada"}, tgtest.User{ID: 42, FirstName: "Ada"}
	u := ts.tg.NewUpdate(chat, from, "hello from the webhook")
	for _, secret := range []string{"", "wrong"} {
		if code, err := ts.tg.DeliverWebhook(u, secret); err != nil || code != http.StatusUnauthorized {
			t.Errorf("webhook with secret %q = %d %v, want 401", secret, code, err)
		}
	}
	if n, _ := ts.db.CountMessages(context.Background(), 0); n != 0 {
		t.Fatalf("a refused webhook call stored %d messages", n)
	}
	for i := 0; i < 2; i++ { // Telegram may deliver an update twice
		if code, err := ts.tg.DeliverWebhook(u, wh.SecretToken); err != nil || code != 200 {
			t.Fatalf("webhook delivery %d = %d %v, want 200", i+1, code, err)
		}
	}
	n, _ := ts.db.CountMessages(context.Background(), 0)
	if n != 1 {
		t.Errorf("%d messages after one update delivered twice, want 1", n)
	}
	if code, _ := ts.call(t, "PUT", "/api/v1/telegram/chats/-100500", map[string]any{"channel": "general"}, nil); code != 200 {
		t.Errorf("PUT chat link = %d", code)
	}
	var chats struct{ Items []view.TelegramChatView }
	ts.call(t, "GET", "/api/v1/telegram/chats", nil, &chats)
	if len(chats.Items) != 2 {
		t.Errorf("chats = %+v, want the webhook's private chat and the linked group", chats.Items)
	}
	code, page := ts.call(t, "GET", "/telegram", nil, nil)
	if code != 200 || !strings.Contains(page, `data-testid="telegram-page"`) || !strings.Contains(page, "…wxyz") || strings.Contains(page, tgToken) {
		t.Errorf("GET /telegram = %d; want the settings page with the hint and never the token", code)
	}
	if code, _ := ts.call(t, "GET", "/api/v1/telegram/outbox?state=bogus", nil, nil); code != 400 {
		t.Errorf("outbox with a bad state = %d, want 400", code)
	}
}

func TestTelegramAdminOnly(t *testing.T) {
	ts := newTelegramServer(t)
	var tok struct {
		Token string `json:"token"`
	}
	var m bullpen.Member
	ts.call(t, "POST", "/api/v1/members", map[string]any{"handle": "bob", "display_name": "Bob"}, &m)
	ts.call(t, "POST", "/api/v1/tokens", map[string]any{"name": "bob", "member_id": m.ID}, &tok)
	bob := &telegramServer{url: ts.url, token: tok.Token}
	for _, path := range []string{"/api/v1/telegram", "/api/v1/telegram/users", "/api/v1/telegram/chats"} {
		if code, _ := bob.call(t, "GET", path, nil, nil); code != http.StatusForbidden {
			t.Errorf("GET %s by a non-admin = %d, want 403", path, code)
		}
	}
}
