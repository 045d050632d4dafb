package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/chromedp/chromedp"
)

// The operator's limit flags reach the sandboxes: with the defaults a
// sandbox created with no limits has the default disk and cpu; with
// --sandbox-disk-quota=off its GET says disk_unbounded and the dashboard's
// sandbox list says "unbounded disk".
func TestSandboxDefaultLimitsEndToEnd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("sandboxes need root")
	}
	on := startMainWith(t, "--sandbox-default-cpu=0.5")
	got := createAndGet(t, on, "bounded")
	if got["disk_unbounded"] != false || got["disk_bytes"] != float64(1<<30) || got["cpu"] != 0.5 {
		t.Fatalf("default-limit sandbox: %v", got)
	}
	off := startMainWith(t, "--sandbox-disk-quota=off")
	got = createAndGet(t, off, "unbounded")
	if got["disk_unbounded"] != true || got["disk_bytes"] != float64(0) {
		t.Fatalf("quota-off sandbox: %v", got)
	}

	tab := browsertest.Browser(t, 120*time.Second)
	const usage = `Array.from(document.querySelectorAll('[data-testid="sandbox-item"]')).some(e => e.textContent.includes("unbounded") && e.querySelector('[data-testid="sandbox-item-usage"]').textContent.includes("unbounded disk"))`
	if err := chromedp.Do(tab,
		chromedp.Navigate(off.m.URL()),
		chromedp.WaitVisible(`[data-testid="login-token"]`),
		chromedp.SendKeys(`[data-testid="login-token"]`, off.token),
		browsertest.Click(`[data-testid="login-submit"]`),
		chromedp.WaitVisible(`[data-testid="composer-input"]`),
		browsertest.Click(`[data-testid="panel-tab-sandboxes"]`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(tab, chromedp.Poll[bool](usage, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		text, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('[data-sandboxes]').innerText`))
		t.Fatalf("no \"unbounded disk\" in the sandbox list: %v\n%s", err, text)
	}
}

type runningMain struct {
	m     *Main
	token string
}

// startMainWith runs the program on a loopback port and a temp data dir
// with extra flags; cleanup terminates its sandboxes.
func startMainWith(t testing.TB, args ...string) runningMain {
	t.Helper()
	var out bytes.Buffer
	m := NewMain(&out, io.Discard)
	if err := m.ParseFlags("serve", append([]string{"--data", t.TempDir(), "--addr", "127.0.0.1:0"}, args...)); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Cleanup(func() {
		if m.Sandboxes != nil {
			m.Sandboxes.Manager().TerminateAll(context.Background())
		}
		m.Close(context.Background())
	})
	if m.Sandboxes == nil {
		t.Fatal("the server started without sandboxes")
	}
	return runningMain{m: m, token: tokenRE.FindString(out.String())}
}

// createAndGet creates a sandbox with no limits through the API and
// returns its GET response.
func createAndGet(t *testing.T, r runningMain, name string) map[string]any {
	t.Helper()
	call := func(method, path, body string, want int) map[string]any {
		req, _ := http.NewRequest(method, r.m.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+r.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want || json.Unmarshal(b, &v) != nil {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return v
	}
	call("POST", "api/v1/sandboxes", `{"name":"`+name+`"}`, http.StatusCreated)
	return call("GET", "api/v1/sandboxes/"+name, "", http.StatusOK)
}
