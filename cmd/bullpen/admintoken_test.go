package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/store/storetest"
)

// `bullpen admin-token` on the data directory of an office whose first
// token is lost prints a new one, once, which logs in; the old one still
// works until revoked. The server runs meanwhile (SQLite in WAL mode).
func TestAdminTokenSubcommand(t *testing.T) {
	dir := t.TempDir()
	m, out := startMain(t, dir)
	defer m.Close(context.Background())
	first := tokenRE.FindString(out.String())
	var buf bytes.Buffer
	if err := run(context.Background(), []string{"admin-token", "--data", dir}, &buf, &buf); err != nil {
		t.Fatalf("admin-token: %v\n%s", err, buf.String())
	}
	tokens := tokenRE.FindAllString(buf.String(), -1)
	if len(tokens) != 1 || tokens[0] == first || !strings.Contains(buf.String(), "@admin") {
		t.Fatalf("admin-token printed %q, want one new token for @admin", buf.String())
	}
	req, _ := http.NewRequest("GET", m.URL()+"api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+tokens[0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /me with the new token = %d, want 200", resp.StatusCode)
	}
	var empty bytes.Buffer
	err = run(context.Background(), []string{"admin-token", "--data", t.TempDir()}, &empty, &empty)
	if err == nil || !strings.Contains(err.Error(), "no office yet") {
		t.Errorf("admin-token on an empty data dir = %v, want a clear error", err)
	}
	err = run(context.Background(), []string{"admin-token", "--data", dir, "--admin", "nobody"}, &empty, &empty)
	if err == nil || !strings.Contains(err.Error(), "nobody") {
		t.Errorf("admin-token --admin nobody = %v, want an error naming nobody", err)
	}
}

// With --database-url it works on PostgreSQL the same way.
func TestAdminTokenPostgres(t *testing.T) {
	if os.Getenv(storetest.EnvPostgres) == "" {
		storetest.Dialects(t) // fails under CI
		t.Skip(storetest.EnvPostgres + " not set")
	}
	url := storetest.Config(t, "postgres").URL
	var out bytes.Buffer
	m := NewMain(&out, &out)
	if err := m.ParseFlags("serve", []string{"--database-url", url, "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--sandboxes=false"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	var buf bytes.Buffer
	if err := run(context.Background(), []string{"admin-token", "--database-url", url}, &buf, &buf); err != nil {
		t.Fatalf("admin-token: %v\n%s", err, buf.String())
	}
	tok := tokenRE.FindString(buf.String())
	req, _ := http.NewRequest("GET", m.URL()+"api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if tok == "" || resp.StatusCode != http.StatusOK {
		t.Errorf("token %q from admin-token on PostgreSQL: GET /me = %d", tok, resp.StatusCode)
	}
}
