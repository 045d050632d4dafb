// Package web serves Bullpen over HTTP with Fiber: the REST API under
// /api/v1, the websocket event feed, and the templ dashboard. Handlers
// parse, call a service, and render; the rules live in the services.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/fds"
	"github.com/gofiber/fiber/v2"
)

// Config configures the server.
type Config struct {
	// OfficeName is shown in the dashboard.
	OfficeName string
	// SecureCookies sets the Secure flag on cookies (behind HTTPS).
	SecureCookies bool
	// BodyLimit bounds request bodies in bytes (default 1 MiB).
	BodyLimit int
	// HeartbeatInterval is how often websockets are pinged (default 25 s).
	HeartbeatInterval time.Duration
	// FrameLinger is how long the websocket waits after the first queued
	// event to gather more into the same frame (default 1 ms; negative
	// turns it off).
	FrameLinger time.Duration
	// FrameInterval is the least time between two frames to one
	// websocket while events keep coming (default 10 ms; negative turns
	// it off): a busy feed then sends one frame of many events rather than
	// many small ones, each a system call on both ends. A feed that was
	// quiet gets its next event after FrameLinger alone. At 1,000
	// messages/s to 100 clients a frame costs about 25 µs of CPU per
	// client, writer and reader; 10 ms rather than 5 ms halves that
	// (about a fifth of a core) for at most 5 ms more latency.
	FrameInterval time.Duration
	// FrameBudget bounds the frames per second written to all event
	// websockets together while events keep coming (default 8,000;
	// negative: no bound). Each frame costs a write on the server and a
	// read on the client whatever it holds, so with many clients the
	// interval between two frames to one busy client grows past
	// FrameInterval to clients/FrameBudget (300 clients: 37.5 ms): the
	// frames grow instead of their number, and the cost of a message stays
	// near flat in the number of clients. A quiet feed's next event still
	// leaves after FrameLinger alone.
	FrameBudget int
	// ProviderNotice is shown as a banner on the dashboard when set.
	ProviderNotice string
	// Notice, when set, replaces ProviderNotice with one read at each page
	// view, so that it follows the provider settings.
	Notice func(ctx context.Context) string
	// OnWatch, when set, is called when a dashboard (a cookie session)
	// opens the event websocket: `bullpen demo` starts its simulation
	// then. It must return at once.
	OnWatch func()
	// AuthFailures is how many failed authentications (a bad Bearer
	// token, login token or session cookie) one client address may make
	// per AuthWindow before it gets 429 (default 10; negative: no limit).
	AuthFailures int
	// AuthWindow is the time over which the attempts come back (default 1 min).
	AuthWindow time.Duration
	// TrustedProxies lists the IPs or CIDRs of reverse proxies whose
	// X-Forwarded-For names the client. Empty (the default) counts the
	// connection's address, so no client can pick its own.
	TrustedProxies []string
	// Descriptors, when set, counts the process's open file descriptors
	// against its limit (fds.Count); health turns "degraded" above 90 %.
	Descriptors func() (fds.Usage, error)
	// SandboxesOff says the operator turned sandboxes off; SandboxesDown,
	// why they are unavailable otherwise. Health reports either when the
	// server runs without sandboxes.
	SandboxesOff  bool
	SandboxesDown string
	// SandboxReady, when set, checks that the running sandbox runtime can
	// start sandboxes (its init binary is there); health reports its error.
	SandboxReady func(ctx context.Context) error
	// Metrics serves GET /metrics (Prometheus text format) when set;
	// without it /metrics answers 404.
	Metrics http.Handler
	// MetricsToken, when set, lets a client that is not on a loopback
	// address read /metrics with "Authorization: Bearer MetricsToken".
	// Loopback clients need none.
	MetricsToken string
	// ObserveRequest, when set, is told of every finished request: its
	// method, the route pattern that served it (never the raw path), the
	// status and how long the handler took.
	ObserveRequest func(method, route string, status int, d time.Duration)
	// Now is the clock of the limits (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Office is what the server needs of the office; *office.Office
// provides it. Each part is declared beside the handlers that call it.
type Office interface {
	OfficeAuth
	OfficeTokens
	OfficeChannels
	OfficeMembers
	OfficeMessages
	OfficeEvents
	OfficeTimeline
}

// Services are what the server serves. Office is required; the others
// are optional and their routes answer "unavailable" when nil. Each
// feature's interface is declared beside its handlers.
type Services struct {
	Office Office
	// Agents serves /api/v1/agents, /api/v1/roles and /api/v1/approvals.
	Agents AgentService
	// Wiki serves /api/v1/wiki.
	Wiki Wiki
	// Memory serves /api/v1/agents/:id/memory.
	Memory Memory
	// Sandboxes serves /api/v1/sandboxes and /api/v1/images.
	Sandboxes Sandboxes
	// Telegram serves /api/v1/telegram, the webhook and the settings page.
	Telegram Telegram
	// Turns serves the turn inspector: /api/v1/turns and /turns.
	Turns TurnService
	// Timeline writes the Activity timeline's lines; without it the
	// timeline shows event types.
	Timeline EventLines
	// Settings serves /api/v1/settings and the Settings page's providers.
	Settings Settings
	// Tasks serves /api/v1/tasks; Routines /api/v1/routines.
	Tasks    TaskService
	Routines RoutineService
	// MCP serves /mcp (package mcp's handler): agent CLIs' tools.
	MCP http.Handler
	// E2B serves the E2B-compatible API under /e2b (package e2b).
	E2B E2B
}

// Server is Bullpen's HTTP server.
type Server struct {
	app *fiber.App
	off Office
	svc Services
	sb  sandboxAPI // svc.Sandboxes, split by handler file
	cfg Config
	log *slog.Logger

	// fails limits failed authentications per client address; nil when
	// off. known holds the credentials that still work while limited.
	fails   *failLimiter
	known   *knownCreds
	flights authFlights
	proxies proxies

	// ctx ends when the server shuts down; websockets watch it.
	ctx    context.Context
	cancel context.CancelFunc
	wsWG   sync.WaitGroup
	// wsMu orders trackWebsocket's Add before Shutdown's Wait: once
	// wsClosing is set, a websocket that opens late is not waited for (the
	// server's ctx has ended, so it ends at once).
	wsMu      sync.Mutex
	wsClosing bool
	// wsOpen counts the open websockets, for the metrics.
	wsOpen atomic.Int64
	// feeds counts the open event websockets, which share FrameBudget.
	feeds atomic.Int64
}

// trackWebsocket counts a websocket as open until the returned func runs;
// Shutdown waits for every one.
func (s *Server) trackWebsocket() (done func()) {
	s.wsOpen.Add(1)
	s.wsMu.Lock()
	defer s.wsMu.Unlock()
	if s.wsClosing {
		return func() { s.wsOpen.Add(-1) }
	}
	s.wsWG.Add(1)
	return func() { s.wsOpen.Add(-1); s.wsWG.Done() }
}

// WebsocketClients returns how many websockets (event feeds and
// interactive execs) are open.
func (s *Server) WebsocketClients() int64 { return s.wsOpen.Load() }

// New builds the server and its routes.
func New(cfg Config, svc Services) *Server {
	if cfg.BodyLimit == 0 {
		cfg.BodyLimit = 1 << 20
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = 25 * time.Second
	}
	if cfg.FrameLinger == 0 {
		cfg.FrameLinger = time.Millisecond
	}
	if cfg.FrameInterval == 0 {
		cfg.FrameInterval = 10 * time.Millisecond
	}
	if cfg.FrameBudget == 0 {
		cfg.FrameBudget = 8000
	}
	if cfg.OfficeName == "" {
		cfg.OfficeName = "Bullpen"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{off: svc.Office, svc: svc, sb: newSandboxAPI(svc.Sandboxes), cfg: cfg, log: cfg.Logger}
	s.setupAuthLimit()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.app = fiber.New(fiber.Config{
		AppName:               "bullpen",
		BodyLimit:             cfg.BodyLimit,
		DisableStartupMessage: true,
		ErrorHandler:          s.handleError,
		// Bodies stream so that sandbox file uploads can be large; limitBody
		// holds every other request to BodyLimit.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		ReadTimeout:                  30 * time.Second,
		IdleTimeout:                  120 * time.Second,
	})
	s.routes()
	return s
}

// App returns the Fiber app, for tests that call app.Test.
func (s *Server) App() *fiber.App { return s.app }

// Serve accepts connections on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	if err := s.app.Listener(ln); err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("web: serve: %w", err)
	}
	return nil
}

// Shutdown closes websockets with a going-away frame, then stops accepting
// requests and waits for running ones until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.cancel()
	s.waitWebsockets(ctx)
	if err := s.app.ShutdownWithContext(ctx); err != nil {
		return fmt.Errorf("web: shutdown: %w", err)
	}
	return nil
}

// waitWebsockets waits until every tracked websocket has ended, or ctx
// has; websockets opened from now on are not waited for.
func (s *Server) waitWebsockets(ctx context.Context) {
	s.wsMu.Lock()
	s.wsClosing = true
	s.wsMu.Unlock()
	done := make(chan struct{})
	go func() { s.wsWG.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (s *Server) routes() {
	app := s.app
	if s.cfg.ObserveRequest != nil {
		app.Use(s.observe)
	}
	app.Use(s.requestID)
	app.Use(securityHeaders)
	app.Use(s.limitBody)
	app.Get("/healthz", s.health)
	app.Get("/api/v1/healthz", s.health) // before the API's auth: health needs no credential
	app.Get("/api/v1/openapi.json", s.openapiDoc)
	app.Get("/metrics", s.metrics)
	app.All("/debug/pprof/*", s.profiles())
	app.Get("/static/*", newStaticFiles().serve)
	app.Get("/login", compressPages, s.loginPage)
	app.Post("/login", s.login)
	app.Post(bullpen.TelegramWebhookPath, s.telegramWebhook) // no login: the secret token header
	s.mcpRoutes(app)                                         // no login, no CSRF: its own Bearer token
	s.e2bRoutes(app)                                         // no login, no CSRF: E2B keys

	api := app.Group("/api/v1", s.authAPI)
	api.Get("/ws", s.websocketUpgrade, s.websocket())
	api.Get("/me", s.me)
	api.Post("/e2b/keys", s.mintE2BKey)
	api.Get("/members", s.listMembers)
	api.Post("/members", s.createMember)
	api.Get("/members/:id", s.getMember)
	api.Patch("/members/:id", s.updateMember)
	api.Get("/channels", s.listChannels)
	api.Post("/channels", s.createChannel)
	api.Get("/channels/:id", s.getChannel)
	api.Post("/channels/:id/join", s.joinChannel)
	api.Post("/channels/:id/leave", s.leaveChannel)
	api.Get("/channels/:id/messages", s.listMessages)
	api.Get("/channels/:id/latest-replies", s.latestReplies)
	api.Post("/channels/:id/messages", s.postMessage)
	api.Post("/dms", s.openDM)
	api.Get("/messages/:id", s.getMessage)
	api.Get("/messages/:id/thread", s.getThread)
	api.Patch("/messages/:id", s.editMessage)
	api.Delete("/messages/:id", s.deleteMessage)
	api.Get("/events", s.listEvents)
	api.Get("/events/kinds", s.listEventKinds)
	api.Get("/tokens", s.listTokens)
	api.Post("/tokens", s.createToken)
	api.Delete("/tokens/:id", s.revokeToken)
	// Feature routes register here, one line each.
	s.agentRoutes(api)
	s.wikiRoutes(api)
	s.memoryRoutes(api)
	s.sandboxRoutes(api)
	s.telegramRoutes(api)
	s.turnRoutes(api)
	s.sandboxSettingsRoutes(api)
	s.settingsRoutes(api)
	s.taskRoutes(api)
	s.routineRoutes(api)

	api.Use(func(c *fiber.Ctx) error {
		return bullpen.Errorf(bullpen.ENOTFOUND, "no such endpoint: %s %s", c.Method(), c.Path())
	})

	page := app.Group("", s.authPage, compressPages)
	page.Post("/logout", s.logout)
	page.Get("/", s.home)
	page.Get("/c/:name", s.channelPage)
	page.Get("/telegram", s.telegramPage)
	s.turnPages(page)
	page.Get("/settings", s.settingsPage)
	s.taskPages(page)
	s.routinePages(page)
	app.Use(func(c *fiber.Ctx) error {
		return bullpen.Errorf(bullpen.ENOTFOUND, "page not found")
	})
}

// securityHeaders sets a strict content security policy and friends.
// Scripts come from this site only. Styles may also be inline because the
// vendored terminal (xterm.js) sizes its cells with <style> elements it
// writes at run time; user text still never becomes markup (messages and
// pages are sanitized, and bluemonday drops <style> and style attributes).
func securityHeaders(c *fiber.Ctx) error {
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("X-Frame-Options", "DENY")
	c.Set("Referrer-Policy", "same-origin")
	c.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "+
		"script-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	return c.Next()
}
