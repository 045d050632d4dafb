// Package call holds what the HTTP providers share: the per-attempt timeout,
// retries with exponential backoff and jitter, Retry-After handling, and the
// mapping of HTTP statuses to Bullpen error codes. This is the only retry loop,
// and it is tested.
package call

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// Defaults of Policy.
const (
	DefaultTimeout       = 120 * time.Second
	DefaultMaxRetries    = 3
	DefaultBaseDelay     = 1 * time.Second
	DefaultMaxDelay      = 30 * time.Second
	DefaultMaxRetryAfter = 2 * time.Minute
)

// Policy says how long one attempt may take and how failures are retried.
type Policy struct {
	Provider      string        // named in every error message
	Timeout       time.Duration // per attempt; 0 means DefaultTimeout
	MaxRetries    int           // 0 means DefaultMaxRetries; negative means none
	BaseDelay     time.Duration // first backoff; 0 means DefaultBaseDelay
	MaxDelay      time.Duration // backoff cap; 0 means DefaultMaxDelay
	MaxRetryAfter time.Duration // a longer Retry-After gives up; 0 means DefaultMaxRetryAfter
	// Sleep waits between attempts. Nil means a timer that also ends when
	// the context does. Tests inject a recorder.
	Sleep func(time.Duration)
	// Rand returns a number in [0, 1) for jitter. Nil means math/rand.
	Rand func() float64
	// Now is the clock for Retry-After dates. Nil means time.Now.
	Now func() time.Time
}

func (p Policy) timeout() time.Duration { return orDefault(p.Timeout, DefaultTimeout) }

func (p Policy) retries() int {
	switch {
	case p.MaxRetries < 0:
		return 0
	case p.MaxRetries == 0:
		return DefaultMaxRetries
	}
	return p.MaxRetries
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Attempt makes one try. streamed reports whether it delivered any delta to
// the caller; such an attempt is never retried.
type Attempt func(ctx context.Context) (resp llm.Response, streamed bool, err error)

// Do runs attempt under p and returns its response or a *bullpen.Error.
func Do(ctx context.Context, p Policy, attempt Attempt) (llm.Response, error) {
	max := p.retries()
	for n := 0; ; n++ {
		actx, cancel := context.WithTimeout(ctx, p.timeout())
		resp, streamed, err := attempt(actx)
		timedOut := actx.Err() == context.DeadlineExceeded
		cancel()
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return llm.Response{}, &bullpen.Error{Code: bullpen.EUNAVAILABLE,
				Message: fmt.Sprintf("%s: request canceled", p.Provider), Err: ctx.Err()}
		}
		if timedOut {
			return llm.Response{}, &bullpen.Error{Code: bullpen.EUNAVAILABLE,
				Message: fmt.Sprintf("%s: no complete answer within %s", p.Provider, p.timeout()),
				Err:     errors.Join(context.DeadlineExceeded, err)}
		}
		var te *llm.TimeoutError
		if errors.As(err, &te) && te.Phase != llm.PhaseConnect {
			// The provider took the request and went silent: another
			// attempt would most likely wait as long again, unseen.
			return llm.Response{}, &bullpen.Error{Code: bullpen.EUNAVAILABLE,
				Message: fmt.Sprintf("%s: %v", p.Provider, te), Err: err}
		}
		retryable, wait := p.retryable(err, n)
		if !retryable || streamed || n >= max {
			return llm.Response{}, p.final(err, n+1, retryable && !streamed)
		}
		if err := p.sleep(ctx, wait); err != nil {
			return llm.Response{}, &bullpen.Error{Code: bullpen.EUNAVAILABLE,
				Message: fmt.Sprintf("%s: request canceled", p.Provider), Err: err}
		}
	}
}

// retryable reports whether err may be retried and after how long.
func (p Policy) retryable(err error, n int) (bool, time.Duration) {
	var se *StatusError
	if !errors.As(err, &se) {
		return true, p.backoff(n) // a network error: the server may come back
	}
	if !retryableStatus(se.Status) {
		return false, 0
	}
	if d, ok := RetryAfter(se.Header, p.now()); ok {
		if d > orDefault(p.MaxRetryAfter, DefaultMaxRetryAfter) {
			return false, 0
		}
		return true, d
	}
	return true, p.backoff(n)
}

func retryableStatus(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusRequestTimeout ||
		status == http.StatusConflict || status >= 500
}

// backoff is exponential with jitter: a random point in the upper half of
// BaseDelay·2ⁿ, capped at MaxDelay.
func (p Policy) backoff(n int) time.Duration {
	d := orDefault(p.BaseDelay, DefaultBaseDelay)
	limit := orDefault(p.MaxDelay, DefaultMaxDelay)
	for i := 0; i < n && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	r := rand.Float64
	if p.Rand != nil {
		r = p.Rand
	}
	return d/2 + time.Duration(r()*float64(d/2))
}

func (p Policy) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p Policy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		p.Sleep(d)
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// final turns the last error into a *bullpen.Error.
func (p Policy) final(err error, attempts int, exhausted bool) error {
	suffix := ""
	if exhausted && attempts > 1 {
		suffix = fmt.Sprintf(" (gave up after %d attempts)", attempts)
	}
	var se *StatusError
	if !errors.As(err, &se) {
		if te := (*llm.TimeoutError)(nil); errors.As(err, &te) {
			err = te // *url.Error's wrapping adds only the URL
		}
		return &bullpen.Error{Code: bullpen.EUNAVAILABLE,
			Message: fmt.Sprintf("%s: request failed: %v%s", p.Provider, err, suffix), Err: err}
	}
	msg := fmt.Sprintf("%s: HTTP %d", p.Provider, se.Status)
	if text := http.StatusText(se.Status); text != "" {
		msg += " " + text // 529, Anthropic's overloaded, has none
	}
	if se.Event != "" {
		msg = fmt.Sprintf("%s: error event in the stream: %s", p.Provider, se.Event)
	}
	if se.Message != "" {
		msg += ": " + se.Message
	}
	if d, ok := RetryAfter(se.Header, p.now()); ok && se.Status == http.StatusTooManyRequests {
		msg += fmt.Sprintf(" (retry after %s)", d.Round(time.Second))
	}
	return &bullpen.Error{Code: StatusCode(se.Status), Message: msg + suffix, Err: err}
}

// StatusCode maps an HTTP status from a model API to a Bullpen error code.
func StatusCode(status int) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return bullpen.EUNAUTHORIZED
	case status == http.StatusTooManyRequests || status == http.StatusPaymentRequired:
		return bullpen.ERATELIMIT // a rate limit, or a spent budget or credit
	case retryableStatus(status):
		return bullpen.EUNAVAILABLE
	case status >= 400 && status < 500:
		return bullpen.EINVALID
	}
	return bullpen.EUNAVAILABLE
}
