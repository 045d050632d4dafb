package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/gateway"
)

// fakeBin puts executables named by scripts on a PATH of their own.
func fakeBin(t *testing.T, scripts map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+":/usr/bin:/bin")
}

// npmScript installs a package as npm would: its bin under --prefix.
const npmScript = `while [ "$1" != "--prefix" ]; do shift; done
p="$2"; mkdir -p "$p/node_modules/.bin"
for b in claude codex opencode claude-code-acp codex-acp gemini; do : > "$p/node_modules/.bin/$b"; done
`

// TestInstallCLIsCommand: `bullpen install-clis` installs every CLI (and
// the ACP agents that ship ready) into
// <data>/clis once; a second run finds them installed.
func TestInstallCLIsCommand(t *testing.T) {
	fakeBin(t, map[string]string{"npm": npmScript, "node": "exit 0\n"})
	data := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"install-clis", "-data", data}, &out, &out); err != nil {
		t.Fatalf("install-clis: %v\n%s", err, out.String())
	}
	for _, d := range []string{"@anthropic-ai+claude-code@2.1.328", "@openai+codex@0.169.0", "opencode-ai@1.18.33",
		"@zed-industries+claude-code-acp@0.16.2", "@zed-industries+codex-acp@0.16.0", "@google+gemini-cli@0.61.0"} {
		if _, err := os.Stat(filepath.Join(data, "clis", d, ".installed")); err != nil {
			t.Errorf("%s not installed: %v\n%s", d, err, out.String())
		}
	}
	if b, err := os.ReadFile(filepath.Join(data, "clis", "@google+gemini-cli@0.61.0", "bullpen", "settings.json")); err != nil ||
		!strings.Contains(string(b), `"selectedType": "gateway"`) {
		t.Errorf("Gemini CLI's settings were not installed with it: %q %v", b, err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"install-clis", "-data", data}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "is installed") != 6 || strings.Contains(out.String(), "installing") {
		t.Fatalf("second run:\n%s", out.String())
	}
}

// TestInstallCLIsNoNode: without node the command fails saying so and
// what to do.
func TestInstallCLIsNoNode(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "npm"), []byte("#!/bin/sh\n"+npmScript), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	var out bytes.Buffer
	err := run(context.Background(), []string{"install-clis", "-data", t.TempDir()}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "needs node") || !strings.Contains(err.Error(), "apt-get install") {
		t.Fatalf("got %v", err)
	}
}

// The gateway finds providers where the built-in loop does, in Settings,
// read at each request: a provider added or changed there is used at once
// with its real key, and one that is not set up is not found.
func TestGatewayUpstreamsFollowSettings(t *testing.T) {
	m, token := startQuiet(t, "serve", nil)
	admin, err := m.Office.Authenticate(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	lookup := m.Settings.Upstream // what the gateway reads when no test sets Main.Upstreams
	ctx := context.Background()
	if _, ok, err := lookup(ctx, "claude"); ok || err != nil {
		t.Fatalf("a provider not set up: ok=%v err=%v", ok, err)
	}
	str := func(s string) *string { return &s }
	p, err := m.Settings.Create(ctx, admin, bullpen.ProviderInput{Name: str("claude"), Kind: str("anthropic"), APIKey: str("sk-real-1234")})
	if err != nil {
		t.Fatal(err)
	}
	up, ok, err := lookup(ctx, "claude")
	if err != nil || !ok || up.Kind != gateway.KindAnthropic || up.APIKey != "sk-real-1234" || up.BaseURL != gateway.DefaultAnthropicBaseURL {
		t.Fatalf("after create: %+v ok=%v err=%v", up, ok, err)
	}
	if _, err := m.Settings.Update(ctx, admin, p.ID, bullpen.ProviderInput{BaseURL: str("http://127.0.0.1:9/")}); err != nil {
		t.Fatal(err)
	}
	if up, _, _ := lookup(ctx, "claude"); up.BaseURL != "http://127.0.0.1:9" { // stored without the trailing slash
		t.Fatalf("after update: %+v", up)
	}
}
