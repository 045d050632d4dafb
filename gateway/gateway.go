// Package gateway is Bullpen's model gateway: Anthropic Messages, OpenAI
// (Chat Completions, Responses) and Gemini compatible endpoints that the
// agent CLIs in the sandboxes call instead of the provider. Each request carries a
// per-turn token; the gateway resolves it to the turn and its agent,
// reserves the call's worst case against the turn's budgets (budget.go),
// and forwards the request to the provider
// configured for that agent with the real credential, which never enters
// the sandbox. Answers, streams included, pass back unchanged, byte for
// byte, while a tee reads their token usage for the turn and keeps a copy
// of both bodies (up to a cap) for the turn inspector.
//
// The gateway holds no state of its own: who a token is (TurnAuthenticator),
// where an agent's model lives (Upstreams), the turn's budgets and usage
// (Turns) and the record of each call (Recorder) are small interfaces the
// caller implements.
package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/internal/redact"
)

// Provider kinds an Upstream may have, which are also two of the
// gateway's path prefixes (the third is KindGemini's).
const (
	KindAnthropic = "anthropic"
	KindOpenAI    = "openai"
)

// Defaults of Config.
const (
	DefaultRecordCap = 256 << 10 // bytes of each body kept in a ModelCall
	DefaultMaxBody   = 8 << 20   // bytes of a request body accepted
	// DefaultMaxOutput is the output reserved for, and set on, a request
	// that names no output limit.
	DefaultMaxOutput = 16_384
)

// OAuthBeta is the anthropic-beta flag that makes Anthropic's API accept a
// Claude subscription OAuth token (from `claude setup-token`) as a Bearer
// credential instead of an API key.
const OAuthBeta = "oauth-2025-04-20"

// TurnAuthenticator resolves a per-turn token. *office.Office implements it.
type TurnAuthenticator interface {
	// AuthenticateTurn returns the member a token belongs to and the turn it
	// was issued for; turnID is 0 for a token that is not a turn token. A
	// wrong, revoked or expired token is an EUNAUTHORIZED error.
	AuthenticateTurn(ctx context.Context, secret string) (bullpen.Member, int64, error)
}

// Upstream is where an agent's model calls go, with the real credential.
type Upstream struct {
	Kind string // KindAnthropic or KindOpenAI
	// BaseURL as the vendor's SDK takes it: Anthropic without /v1
	// (https://api.anthropic.com), OpenAI-compatible with it
	// (https://api.openai.com/v1).
	BaseURL string
	APIKey  string
	// OAuthToken is a Claude subscription token; when set it is sent as
	// Authorization: Bearer with the OAuthBeta flag instead of APIKey.
	OAuthToken string
	Model      string // the provider's default model, recorded when a request names none
	Name       string // a label for records, such as "anthropic"
	// API says how an OpenAI-compatible provider serves /responses:
	// APIResponses natively, APIChat not at all (the gateway translates
	// to Chat Completions), "" unknown: tried natively, and translated
	// from then on if the provider answers 404 or 405.
	API string
}

// Values of Upstream.API.
const (
	APIResponses = "responses"
	APIChat      = "chat"
)

// Upstreams says which provider serves an agent.
type Upstreams interface {
	// Upstream returns the provider configured for the agent member. An
	// agent without one is an EUNAVAILABLE error.
	Upstream(ctx context.Context, agent bullpen.Member) (Upstream, error)
}

// Budget is the state of a turn's token budgets.
type Budget struct {
	AgentID int64 // the turn's agent (agents table), for the record
	// Limit is empty while the turn may make model calls; else the name of
	// the limit that stops it (bullpen.LimitTurnTokens, LimitDailyTokens).
	Limit string
	// Detail is the notice the channel gets, also the CLI's error message.
	Detail string
}

// Turns keeps a CLI turn's budgets and usage. *agents.Service implements it.
type Turns interface {
	// Reserve reserves a model call's worst case before it is forwarded:
	// input tokens plus up to maxOutput output tokens, against the turn's
	// and the agent's daily budgets, counting the calls in flight. The
	// Reservation's Output is what the budgets leave (at most maxOutput);
	// a turn with no room left gets Budget.Limit set and no reservation.
	// Reserve also takes one of the turn's call slots, waiting for one a
	// while; a turn whose slots stay taken is an ERATELIMIT error. A turn
	// that is not running is an EFORBIDDEN error.
	Reserve(ctx context.Context, turnID int64, input, maxOutput int) (Budget, Reservation, error)
	// Settle ends a reservation and frees its slot: the turn is charged u
	// when the call's usage arrived whole (complete), else the whole
	// reservation.
	Settle(ctx context.Context, turnID int64, r Reservation, u llm.Usage, complete bool) error
	// BudgetStopped tells the channel that b stopped the turn, as the
	// built-in loop does; called for every refused request, it says so once.
	BudgetStopped(ctx context.Context, turnID int64, b Budget) error
}

// Recorder stores each model call with its turn, for the turn inspector.
type Recorder interface {
	// RecordModelCall stores c; the recorder numbers the turn's calls
	// (Seq) and may cut bodies further. *store.DB implements it.
	RecordModelCall(ctx context.Context, c bullpen.ModelCall) error
}

// Config configures the gateway. Auth, Upstreams and Turns are required.
type Config struct {
	Auth      TurnAuthenticator
	Upstreams Upstreams
	Turns     Turns
	Recorder  Recorder // nil: calls are not recorded
	// Responses keeps Responses answers for previous_response_id and the
	// gateway's compaction summaries; nil: a MemoryResponses.
	Responses ResponseStore
	// Secrets are blanked in every answer (headers and body, 2xx too),
	// record and log line; each upstream's credentials and base URL's
	// user information are added as they are used. Nil: a set of the
	// gateway's own.
	Secrets *redact.Secrets

	RecordCap int   // bytes of each body kept per ModelCall (DefaultRecordCap)
	MaxBody   int64 // request body limit (DefaultMaxBody)
	// DefaultMaxOutput is the output limit of a request that has none
	// (DefaultMaxOutput).
	DefaultMaxOutput int
	// Timeouts of the upstream call: connect, first byte, idle between two
	// reads of a stream (zero fields: llm.DefaultTimeouts).
	Timeouts llm.Timeouts
	// Transport reaches the providers (tests); nil builds one honouring
	// Timeouts.Connect.
	Transport http.RoundTripper

	Now    func() time.Time
	Logger *slog.Logger
}

// Gateway is the http.Handler New returns.
type Gateway struct {
	cfg    Config
	client *http.Client
	mux    *http.ServeMux
	// chatOnly holds the base URLs of providers found to have no
	// /responses (Upstream.API ""), so the gateway translates at once.
	chatOnly sync.Map
}

// New returns the gateway handler. Its paths start with /anthropic,
// /openai and /gemini; the caller mounts it where the CLIs reach it, for
// example with ANTHROPIC_BASE_URL=http://127.0.0.1:PORT/anthropic, an
// OpenAI base URL of http://127.0.0.1:PORT/openai/v1 and
// GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT/gemini.
func New(cfg Config) http.Handler {
	cfg.defaults()
	g := &Gateway{cfg: cfg, client: &http.Client{Transport: cfg.Transport}}
	g.mux = http.NewServeMux()
	for _, e := range endpoints {
		g.mux.Handle(e.method+" "+e.path, g.endpoint(e))
	}
	for _, op := range responsesOps {
		g.mux.Handle("POST "+op.path, g.responses(op))
	}
	g.mux.Handle("POST /gemini/{version}/models/{call}", g.geminiModel())
	g.mux.HandleFunc("/gemini/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, KindGemini, bullpen.Errorf(bullpen.ENOTFOUND, "no such endpoint: %s %s", r.Method, r.URL.Path), false)
	})
	g.mux.HandleFunc("/anthropic/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, KindAnthropic, bullpen.Errorf(bullpen.ENOTFOUND, "no such endpoint: %s %s", r.Method, r.URL.Path), false)
	})
	g.mux.HandleFunc("/openai/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, KindOpenAI, bullpen.Errorf(bullpen.ENOTFOUND, "no such endpoint: %s %s", r.Method, r.URL.Path), false)
	})
	return g
}

// ServeHTTP implements http.Handler.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.mux.ServeHTTP(w, r) }

func (c *Config) defaults() {
	if c.RecordCap <= 0 {
		c.RecordCap = DefaultRecordCap
	}
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.DefaultMaxOutput <= 0 {
		c.DefaultMaxOutput = DefaultMaxOutput
	}
	c.Timeouts = c.Timeouts.Or(llm.DefaultTimeouts)
	if c.Transport == nil {
		c.Transport = newTransport(c.Timeouts)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Responses == nil {
		c.Responses = NewMemoryResponses(0)
	}
	if c.Secrets == nil {
		c.Secrets = redact.New()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Logger = slog.New(c.Secrets.Handler(c.Logger.Handler()))
}
