package metrics_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/metrics"
)

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// TestSeriesReadOnScrape checks that every series reads its source at
// scrape time, with its labels, and that a failing source drops only its
// own series.
func TestSeriesReadOnScrape(t *testing.T) {
	events := int64(41)
	var failed []string
	m := metrics.New(metrics.Config{
		Sources: metrics.Sources{
			LastEvent:        func() int64 { return events },
			WebsocketClients: func() int64 { return 3 },
			Inbox:            func(context.Context) (int64, int64, error) { return 5, 2, nil },
			RunningTurns:     func(context.Context) (int64, error) { return 0, errors.New("db down") },
			Tokens: func(context.Context) ([]metrics.ProviderTokens, error) {
				return []metrics.ProviderTokens{{Provider: "anthropic", Input: 1200, CachedInput: 1000, Output: 80}}, nil
			},
			Sandboxes: func(context.Context) (map[string]int, error) { return map[string]int{"running": 2, "stopped": 1}, nil },
			Outbox:    func(context.Context) (map[string]int64, error) { return map[string]int64{"pending": 4}, nil },
		},
		OnError: func(source string, err error) { failed = append(failed, source) },
	})
	m.ObserveRequest("POST", "/api/v1/channels/:id/messages", 201, 3*time.Millisecond)
	m.ObserveSandboxCreate(12 * time.Millisecond)
	events++
	body := scrape(t, m)
	for _, want := range []string{
		"bullpen_events_total 42",
		"bullpen_websocket_clients 3",
		`bullpen_wakes{state="pending"} 5`,
		`bullpen_wakes{state="claimed"} 2`,
		`bullpen_model_tokens_total{kind="input",provider="anthropic"} 1200`,
		`bullpen_model_tokens_total{kind="cached_input",provider="anthropic"} 1000`,
		`bullpen_model_tokens_total{kind="output",provider="anthropic"} 80`,
		`bullpen_sandboxes{state="running"} 2`,
		`bullpen_sandboxes{state="stopped"} 1`,
		`bullpen_telegram_outbox{state="pending"} 4`,
		`bullpen_http_requests_total{method="POST",route="/api/v1/channels/:id/messages",status="201"} 1`,
		`bullpen_http_request_duration_seconds_count{method="POST",route="/api/v1/channels/:id/messages"} 1`,
		"bullpen_sandbox_create_duration_seconds_count 1",
	} {
		if !strings.Contains(body, "\n"+want+"\n") {
			t.Errorf("scrape has no line %q", want)
		}
	}
	if strings.Contains(body, "bullpen_turns_running ") {
		t.Error("a failed source still produced its series")
	}
	if len(failed) != 1 || failed[0] != "turns" {
		t.Errorf("OnError saw %v, want [turns]", failed)
	}
}

// TokensOf hands a reader's rows on as ProviderTokens, and its error.
func TestTokensOf(t *testing.T) {
	type row struct {
		Provider                   string
		Input, CachedInput, Output int64
	}
	read := metrics.TokensOf(func(context.Context) ([]row, error) {
		return []row{{"anthropic", 10, 4, 2}, {"", 1, 0, 0}}, errors.New("half read")
	})
	got, err := read(context.Background())
	want := []metrics.ProviderTokens{{Provider: "anthropic", Input: 10, CachedInput: 4, Output: 2}, {Input: 1}}
	if err == nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v, %v; want %+v and the error", got, err, want)
	}
}
