package telegram_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/bridge/telegram"
)

// Every variable lands in its field; a bad allowlist names the variables.
func TestEnvFrom(t *testing.T) {
	vars := map[string]string{
		"BULLPEN_TELEGRAM_TOKEN": "123:abc", "BULLPEN_TELEGRAM_MODE": "webhook",
		"BULLPEN_TELEGRAM_WEBHOOK_URL": "https://example.test/tg", "BULLPEN_TELEGRAM_WEBHOOK_SECRET": "s3",
		"BULLPEN_TELEGRAM_USERS": "111=alice, 222=@bob", "BULLPEN_TELEGRAM_APPROVERS": "222",
		"BULLPEN_TELEGRAM_API_URL": "http://127.0.0.1:9",
	}
	getenv := func(k string) string { return vars[k] }
	env, url, err := telegram.EnvFrom(getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := telegram.Env{Token: "123:abc", Mode: "webhook", WebhookURL: "https://example.test/tg", WebhookSecret: "s3",
		Users: []telegram.EnvUser{{TelegramUserID: 111, Handle: "alice"}, {TelegramUserID: 222, Handle: "bob", CanApprove: true}}}
	if !reflect.DeepEqual(env, want) || url != "http://127.0.0.1:9" {
		t.Fatalf("EnvFrom = %+v, %q; want %+v", env, url, want)
	}
	vars["BULLPEN_TELEGRAM_USERS"] = "alice"
	if env, _, err := telegram.EnvFrom(getenv); err == nil || !strings.Contains(err.Error(), "BULLPEN_TELEGRAM_USERS/APPROVERS") || env.Token != "" {
		t.Fatalf("bad allowlist: EnvFrom = %+v, %v; want an error naming the variables and no Env", env, err)
	}
}
