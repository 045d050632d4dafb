package call

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
		ok     bool
	}{
		{"none", http.Header{}, 0, false},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second, true},
		{"fraction", http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond, true},
		{"ms wins", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"1"}}, 250 * time.Millisecond, true},
		{"date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second, true},
		{"past date", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := RetryAfter(tt.header, now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("RetryAfter = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	p := Policy{BaseDelay: time.Second, MaxDelay: 5 * time.Second}
	for _, tt := range []struct {
		n        int
		r        float64
		want     time.Duration
		describe string
	}{
		{0, 0, 500 * time.Millisecond, "lowest jitter"},
		{0, 0.999999, 999999500 * time.Nanosecond, "highest jitter"},
		{1, 0.5, 1500 * time.Millisecond, "doubles"},
		{10, 0, 2500 * time.Millisecond, "capped"},
	} {
		p.Rand = func() float64 { return tt.r }
		if got := p.backoff(tt.n); got != tt.want {
			t.Errorf("%s: backoff(%d) = %v, want %v", tt.describe, tt.n, got, tt.want)
		}
	}
}

func TestStatusCode(t *testing.T) {
	for status, want := range map[int]string{
		400: bullpen.EINVALID, 401: bullpen.EUNAUTHORIZED, 402: bullpen.ERATELIMIT, 403: bullpen.EUNAUTHORIZED,
		404: bullpen.EINVALID, 413: bullpen.EINVALID, 422: bullpen.EINVALID, 429: bullpen.ERATELIMIT,
		500: bullpen.EUNAVAILABLE, 502: bullpen.EUNAVAILABLE, 529: bullpen.EUNAVAILABLE,
	} {
		if got := StatusCode(status); got != want {
			t.Errorf("StatusCode(%d) = %q, want %q", status, got, want)
		}
	}
}

func TestDoNetworkErrorRetried(t *testing.T) {
	var sleeps []time.Duration
	p := Policy{Provider: "x", MaxRetries: 2, Sleep: func(d time.Duration) { sleeps = append(sleeps, d) },
		Rand: func() float64 { return 0 }}
	n := 0
	resp, err := Do(context.Background(), p, func(context.Context) (llm.Response, bool, error) {
		n++
		if n < 3 {
			return llm.Response{}, false, errors.New("connection refused")
		}
		return llm.Response{Text: "ok"}, false, nil
	})
	if err != nil || resp.Text != "ok" || n != 3 || len(sleeps) != 2 {
		t.Errorf("Do = %+v, %v after %d attempts, sleeps %v", resp, err, n, sleeps)
	}

	n = 0
	_, err = Do(context.Background(), p, func(context.Context) (llm.Response, bool, error) {
		n++
		return llm.Response{}, false, errors.New("connection refused")
	})
	if ErrorCodeOf(err) != bullpen.EUNAVAILABLE || n != 3 ||
		bullpen.ErrorMessage(err) != "x: request failed: connection refused (gave up after 3 attempts)" {
		t.Errorf("Do err = %v after %d attempts", err, n)
	}
}

func TestVendorMessage(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"message":"bad key","type":"invalid_request_error"}}`:              "bad key",
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`: "Overloaded",
		`{"error":"model 'x' not found"}`:                                             "model 'x' not found",
		`{"detail":"Not Found"}`:                                                      "Not Found",
		"<html>\n  Bad   gateway </html>":                                             "<html> Bad gateway </html>",
	} {
		if got := vendorMessage([]byte(body)); got != want {
			t.Errorf("vendorMessage(%s) = %q, want %q", body, got, want)
		}
	}
}

// ErrorCodeOf keeps the test readable.
func ErrorCodeOf(err error) string { return bullpen.ErrorCode(err) }
