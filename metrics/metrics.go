// Package metrics exposes Bullpen's operational figures to Prometheus.
// Nothing imports it but main: requests and sandbox creations are pushed
// in through the Observe* methods, which main hands to the web server and
// the sandbox wiring as plain functions, and every state or depth (wakes
// pending, turns running, sandboxes by state, outbox depth, tokens per
// provider, the event count) is read from its owner on each scrape,
// through the functions in Sources, so no increment has to be threaded
// through the code.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ProviderTokens are the tokens all turns of one provider used.
type ProviderTokens struct {
	Provider                   string
	Input, CachedInput, Output int64
}

// TokensOf adapts a reader of per-provider token rows that have
// ProviderTokens' fields (the store's) to Sources.Tokens.
func TokensOf[R ~struct {
	Provider                   string
	Input, CachedInput, Output int64
}](read func(context.Context) ([]R, error)) func(context.Context) ([]ProviderTokens, error) {
	return func(ctx context.Context) ([]ProviderTokens, error) {
		rows, err := read(ctx)
		out := make([]ProviderTokens, len(rows))
		for i, r := range rows {
			out[i] = ProviderTokens(r)
		}
		return out, err
	}
}

// Sources are read on each scrape; a nil one is left out. Each gets the
// scrape's context, bounded by Config.ScrapeTimeout.
type Sources struct {
	// LastEvent is the highest event sequence number: events are numbered
	// without gaps, so it is the count of events ever stored.
	LastEvent func() int64
	// WebsocketClients is how many event and exec websockets are open.
	WebsocketClients func() int64
	// Inbox returns the wakes pending and claimed, office-wide.
	Inbox func(ctx context.Context) (pending, claimed int64, err error)
	// RunningTurns returns the turns running, office-wide.
	RunningTurns func(ctx context.Context) (int64, error)
	// Tokens returns the model tokens used per provider.
	Tokens func(ctx context.Context) ([]ProviderTokens, error)
	// Sandboxes returns the sandboxes per state.
	Sandboxes func(ctx context.Context) (map[string]int, error)
	// Outbox returns the Telegram outbox items per state.
	Outbox func(ctx context.Context) (map[string]int64, error)
}

// Config configures the metrics.
type Config struct {
	Sources Sources
	// ScrapeTimeout bounds each source read (default 2 s).
	ScrapeTimeout time.Duration
	// OnError is told of a source that failed (default: nothing); the
	// scrape goes on without that series.
	OnError func(source string, err error)
}

// Metrics holds the registry and the pushed series.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	creates  prometheus.Histogram
}

// New registers Bullpen's series, the Go runtime's and the process's.
func New(cfg Config) *Metrics {
	if cfg.ScrapeTimeout <= 0 {
		cfg.ScrapeTimeout = 2 * time.Second
	}
	if cfg.OnError == nil {
		cfg.OnError = func(string, error) {}
	}
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bullpen_http_requests_total",
		Help: "HTTP requests answered, by method, route pattern and status."}, []string{"method", "route", "status"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "bullpen_http_request_duration_seconds",
		Help:    "Time to answer an HTTP request (for streams: until the stream starts), by method and route pattern.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)}, []string{"method", "route"})
	m.creates = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "bullpen_sandbox_create_duration_seconds",
		Help: "Time to create and start a sandbox.", Buckets: prometheus.ExponentialBuckets(0.002, 2, 14)})
	m.reg.MustRegister(m.requests, m.latency, m.creates, &scraped{src: cfg.Sources, timeout: cfg.ScrapeTimeout, onError: cfg.OnError},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in Prometheus's text format. It does no
// access control: the web server decides who may read it.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ObserveRequest counts one answered request under its route pattern.
func (m *Metrics) ObserveRequest(method, route string, status int, d time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(method, route).Observe(d.Seconds())
}

// ObserveSandboxCreate records how long one sandbox took to create.
func (m *Metrics) ObserveSandboxCreate(d time.Duration) { m.creates.Observe(d.Seconds()) }
