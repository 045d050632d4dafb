package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestOnOffFlags checks that --sandboxes and --shared-database take the
// on/off the configuration table of docs/operations.md shows, as flags and as env.
func TestOnOffFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     string
		want    bool
		wantErr bool
	}{
		{"default", nil, "", true, false},
		{"off", []string{"--sandboxes=off"}, "", false, false},
		{"on", []string{"--sandboxes=on"}, "", true, false},
		{"false", []string{"--sandboxes=false"}, "", false, false},
		{"bare", []string{"--sandboxes"}, "off", true, false},
		{"env off", nil, "off", false, false},
		{"env false", nil, "false", false, false},
		{"flag beats env", []string{"--sandboxes=on"}, "off", true, false},
		{"bad flag", []string{"--sandboxes=maybe"}, "", false, true},
		{"bad env", nil, "maybe", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("BULLPEN_SANDBOXES", tt.env)
			m := NewMain(io.Discard, io.Discard)
			err := m.ParseFlags("serve", tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseFlags(%q) with BULLPEN_SANDBOXES=%q: err = %v, want error %v", tt.args, tt.env, err, tt.wantErr)
			}
			if err == nil && m.SandboxesOn != tt.want {
				t.Errorf("ParseFlags(%q) with BULLPEN_SANDBOXES=%q: SandboxesOn = %v, want %v", tt.args, tt.env, m.SandboxesOn, tt.want)
			}
		})
	}
	m := NewMain(io.Discard, io.Discard)
	if err := m.ParseFlags("serve", []string{"--shared-database=on"}); err != nil || !m.SharedDatabase {
		t.Errorf("--shared-database=on: err %v, SharedDatabase %v", err, m.SharedDatabase)
	}
}

// syncBuffer is a bytes.Buffer the server's goroutines may log into.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startOps runs the program without sandboxes on a loopback port, its log
// into logs, and returns it with the admin token.
func startOps(t *testing.T, logs io.Writer, args ...string) (*Main, string) {
	t.Helper()
	var out bytes.Buffer
	m := NewMain(&out, logs)
	if err := m.ParseFlags("serve", append([]string{"--data", t.TempDir(), "--addr", "127.0.0.1:0", "--sandboxes=off"}, args...)); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m, tokenRE.FindString(out.String())
}

// TestLogFormatJSON checks that --log-format json makes every log line a
// JSON object, and that a bad format is refused.
func TestLogFormatJSON(t *testing.T) {
	var logs syncBuffer
	m, _ := startOps(t, &logs, "--log-format", "json")
	m.Logger.Info("probe", "n", 1)
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) < 2 { // "sandboxes are turned off" and the probe
		t.Fatalf("log has %d lines, want the server's and the probe:\n%s", len(lines), logs.String())
	}
	for _, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil || v["msg"] == nil || v["level"] == nil {
			t.Errorf("log line %q is not a JSON record (%v)", l, err)
		}
	}
	if err := NewMain(io.Discard, io.Discard).ParseFlags("serve", []string{"--log-format", "xml"}); err == nil {
		t.Error("--log-format xml was accepted")
	}
	t.Setenv("BULLPEN_LOG_FORMAT", "json")
	var text syncBuffer
	m2 := NewMain(io.Discard, &text)
	if err := m2.ParseFlags("serve", nil); err != nil {
		t.Fatal(err)
	}
	m2.Logger.Info("probe")
	if !strings.HasPrefix(text.String(), "{") {
		t.Errorf("BULLPEN_LOG_FORMAT=json logged %q", text.String())
	}
}

// scrape reads /metrics with an optional header set, returning the status
// and the body.
func scrape(t *testing.T, m *Main, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", m.URL()+"metrics", nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sample returns the value of the first series line that starts with
// prefix (name and labels), or -1.
func sample(body, prefix string) float64 {
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, prefix) {
			f := strings.Fields(l)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// TestMetricsEndToEnd scrapes /metrics of a running server: the expected
// series are there, posting a message moves the event and request
// counters, and a client that is not on loopback (seen through a trusted
// proxy's X-Forwarded-For) needs the metrics token.
func TestMetricsEndToEnd(t *testing.T) {
	m, token := startOps(t, io.Discard, "--trusted-proxies", "127.0.0.1", "--metrics-token", "s3cret-metrics")
	st, before := scrape(t, m, nil)
	if st != 200 {
		t.Fatalf("scrape from loopback = %d %s", st, before)
	}
	req, _ := http.NewRequest("POST", m.URL()+"api/v1/channels/1/messages", strings.NewReader(`{"body":"counted"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("post: %v %v", err, resp)
	}
	resp.Body.Close()
	_, after := scrape(t, m, nil)
	for _, series := range []string{"bullpen_events_total", "bullpen_websocket_clients", `bullpen_wakes{state="pending"}`,
		"bullpen_turns_running", `bullpen_telegram_outbox`, "bullpen_http_request_duration_seconds_bucket",
		"bullpen_sandbox_create_duration_seconds_count", "go_goroutines"} {
		if !strings.Contains(after, "\n"+series) {
			t.Errorf("/metrics has no %s series", series)
		}
	}
	if b, a := sample(before, "bullpen_events_total"), sample(after, "bullpen_events_total"); a < b+1 {
		t.Errorf("bullpen_events_total went from %v to %v after a post, want it to grow", b, a)
	}
	posted := `bullpen_http_requests_total{method="POST",route="/api/v1/channels/:id/messages",status="201"}`
	if got := sample(after, posted); got != 1 {
		t.Errorf("%s = %v, want 1; requests seen:\n%s", posted, got, strings.Join(regexp.MustCompile(`(?m)^bullpen_http_requests_total.*$`).FindAllString(after, -1), "\n"))
	}
	if regexp.MustCompile(`route="/api/v1/channels/1/`).MatchString(after) {
		t.Error("a route label holds a raw path, not the route pattern")
	}
	remote := map[string]string{"X-Forwarded-For": "203.0.113.9"}
	if st, body := scrape(t, m, remote); st != 403 || !strings.Contains(body, `"forbidden"`) {
		t.Errorf("scrape from a remote client without the token = %d %s, want 403", st, body)
	}
	remote["Authorization"] = "Bearer wrong"
	if st, _ := scrape(t, m, remote); st != 403 {
		t.Errorf("scrape with a wrong token = %d, want 403", st)
	}
	remote["Authorization"] = "Bearer s3cret-metrics"
	if st, body := scrape(t, m, remote); st != 200 || !strings.Contains(body, "bullpen_events_total") {
		t.Errorf("scrape with the metrics token = %d, want 200 with the metrics", st)
	}
}
