package web_test

import (
	"testing"
)

// TestTelegramRoutesAgainstSpec drives the Telegram routes other tests
// leave out (unlink a chat, remove a user, resend) so that their answers,
// errors included, are validated against the OpenAPI document.
func TestTelegramRoutesAgainstSpec(t *testing.T) {
	ts := newTelegramServer(t)
	if code, body := ts.call(t, "POST", "/api/v1/telegram/users", map[string]any{"telegram_user_id": 42, "handle": "admin"}, nil); code != 201 {
		t.Fatalf("POST user = %d %s", code, body)
	}
	if code, body := ts.call(t, "PUT", "/api/v1/telegram/chats/-100500", map[string]any{"channel": "general"}, nil); code != 200 {
		t.Fatalf("PUT chat = %d %s", code, body)
	}
	if code, body := ts.call(t, "DELETE", "/api/v1/telegram/chats/-100500", nil, nil); code != 204 {
		t.Errorf("DELETE chat = %d %s, want 204", code, body)
	}
	if code, body := ts.call(t, "DELETE", "/api/v1/telegram/users/42", nil, nil); code != 204 {
		t.Errorf("DELETE user = %d %s, want 204", code, body)
	}
	var e apiError
	if code, _ := ts.call(t, "POST", "/api/v1/telegram/outbox/999/resend", nil, &e); code != 404 || e.Error.Code != "not_found" {
		t.Errorf("resend of no item = %d %+v, want 404 not_found", code, e)
	}
	if code, _ := ts.call(t, "DELETE", "/api/v1/telegram/chats/0", nil, &e); code != 400 || e.Error.Code != "invalid" {
		t.Errorf("DELETE chat 0 = %d %+v, want 400 invalid", code, e)
	}
}
