// Package telegram bridges Telegram chats and the office with
// go-telegram/bot. Each chat is linked to a channel (its own, made on the
// first message, or an existing one, or a DM with an agent). Messages from
// allowlisted Telegram users are posted as their human members with
// Source "telegram", so @mentions, replies and DMs wake agents through the
// same rules as the web; everyone else gets a short refusal and nothing is
// stored. Messages in linked channels go back to the chat through a
// durable outbox, and approvals come with Approve / Deny buttons.
//
// Delivery guarantees:
//
//   - Updates: the effects of an update (the office message, the chat
//     link, replies queued in the outbox) and the next update offset commit
//     in one transaction, and getUpdates only confirms up to that offset.
//     A restart neither replays nor loses an update. Effects made through
//     another service's own transaction (answering an approval) are
//     idempotent: a replay finds the approval answered.
//   - Office → Telegram: the relay turns events into outbox rows and
//     advances its cursor in one transaction, so each event is queued once.
//     A row is claimed (state "sending") before its call and marked sent
//     in the same step that records the Telegram message ID. It is retried
//     only when Telegram cannot have it: the request was never written, or
//     Telegram answered with 429 (after retry_after) or 5xx. If the process
//     stops during the call, or the request went out and no answer came
//     back, the row becomes "uncertain" and is not resent on its own (an
//     admin may resend it). So every message is delivered at most once,
//     and exactly once unless that single in-flight call was cut off.
//
// Run one bridge per bot: Telegram allows one poller (or webhook) per bot.
// Server processes that share one database each run a bridge; only the
// one holding the bridge lock polls, relays and sends (see leader.go).
package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
	secrets "github.com/bullpen-hq/bullpen/internal/redact"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/view"
)

// Modes.
const (
	ModePolling = "polling"
	ModeWebhook = "webhook"
)

// States of the bridge.
const (
	StateDisabled = "disabled" // no token
	StateStarting = "starting"
	StateRunning  = "running"
	StateError    = "error"
)

// Config configures a Bridge.
type Config struct {
	// Office posts and reads as members; DB holds the bridge's own tables
	// (chats, users, outbox, settings). Both required.
	Office *office.Office
	DB     *store.DB
	// Approvals answers approvals from the buttons; nil means the buttons
	// say approvals are not available.
	Approvals Approvals
	// AgentStatus describes what an agent is doing ("idle", "thinking"),
	// for /agents; nil leaves it out.
	AgentStatus func(agentID int64) string
	// Env holds settings from the environment; they win over stored ones.
	Env Env
	// ServerURL is the Bot API base URL; "" means the library's default.
	ServerURL  string
	HTTPClient *http.Client
	// PollTimeout is the long-polling timeout (default 50 s).
	PollTimeout time.Duration
	// MaxBackoff caps retry delays (default 5 min).
	MaxBackoff time.Duration
	// OfficeName is shown by /start.
	OfficeName string
	// Shared is true when other server processes use the same database:
	// the bridge then also follows settings they save.
	Shared bool

	Now func() time.Time
	// Sleep waits d or until ctx ends; nil uses timers. Tests inject one
	// that advances a fake clock.
	Sleep  func(ctx context.Context, d time.Duration) error
	Logger *slog.Logger
	// Secrets learns the bot token and the webhook secret whenever the
	// bridge starts with them, so every view and log line redacts them.
	Secrets *secrets.Secrets
}

// Bridge is the Telegram bridge. Start runs it; Configure and the other
// admin methods serve the API.
type Bridge struct {
	cfg Config
	off *office.Office
	db  *store.DB
	log *slog.Logger

	mu       sync.Mutex
	state    string
	lastErr  string
	username string
	cl       *client
	secret   string // webhook secret in force
	mode     string
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	closed   bool

	restartMu sync.Mutex // one restart at a time (Configure, followSettings)

	inMu   sync.Mutex // one update at a time, from the poller or the webhook
	offset int64      // next update to handle; guarded by inMu

	poke        chan struct{}
	pausedUntil time.Time // guarded by mu: a 429 pauses all sends
}

// New returns a bridge; Start runs it.
func New(cfg Config) (*Bridge, error) {
	if cfg.Office == nil || cfg.DB == nil {
		return nil, fmt.Errorf("telegram: no office or no database")
	}
	if cfg.PollTimeout == 0 {
		cfg.PollTimeout = 50 * time.Second
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 5 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.OfficeName == "" {
		cfg.OfficeName = "Bullpen"
	}
	return &Bridge{cfg: cfg, off: cfg.Office, db: cfg.DB, log: cfg.Logger, state: StateDisabled,
		poke: make(chan struct{}, 1)}, nil
}

// Start applies the environment's settings and starts the bridge when a
// token is set. It returns at once; a bad token shows in Status. Outbox
// rows a stopped process left mid-call become uncertain when this process
// takes the bridge lock (at once, unless another replica holds it).
func (b *Bridge) Start(ctx context.Context) error {
	if err := b.applyEnv(ctx); err != nil {
		return err
	}
	return b.restart(ctx)
}

// Close stops the bridge's loops.
func (b *Bridge) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.stop()
}

func (b *Bridge) stop() {
	b.mu.Lock()
	cancel := b.cancel
	b.cancel = nil
	b.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	b.wg.Wait()
}

// restart stops the running loops and starts them again with the stored
// settings.
func (b *Bridge) restart(ctx context.Context) error {
	b.restartMu.Lock()
	defer b.restartMu.Unlock()
	b.stop()
	st, err := b.db.TelegramBot(ctx)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.mode, b.secret, b.username, b.lastErr, b.cl = st.Mode, st.WebhookSecret, st.BotUsername, "", nil
	b.cfg.Secrets.Add(st.Token, st.WebhookSecret)
	runCtx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	if b.cfg.Shared {
		b.wg.Add(1)
		go func() { defer b.wg.Done(); b.followSettings(runCtx, st) }()
	}
	if st.Token == "" {
		b.state = StateDisabled
		return nil
	}
	cl, err := newClient(st.Token, b.cfg.ServerURL, b.cfg.HTTPClient)
	if err != nil {
		b.state, b.lastErr = StateError, err.Error()
		return nil
	}
	b.cl, b.state = cl, StateStarting
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.lead(runCtx, cl)
	}()
	return nil
}

// run checks the token, sets up polling or the webhook, then runs the
// poller, the relay and the outbox until ctx ends or the token is refused.
// It runs only in the process holding the bridge lock; resign gives the
// lock up (the relay found another relay's work).
func (b *Bridge) run(ctx context.Context, cl *client, st store.TelegramBot, resign context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var username string
	for attempt := 0; ; attempt++ {
		callCtx, done := context.WithTimeout(ctx, 30*time.Second)
		var err error
		username, err = cl.getMe(callCtx)
		done()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		if out, _ := classify(err, nil); out == outcomeUnauthorized {
			b.unauthorized()
			return
		}
		b.setError("cannot reach the Bot API: " + redact(err.Error(), cl.token))
		if b.sleep(ctx, b.backoff(attempt)) != nil {
			return
		}
	}
	if username != st.BotUsername {
		b.db.Transact(ctx, func(tx *store.Tx) error { return tx.SetTelegramUsername(username) })
	}
	if err := b.setupMode(ctx, cl, st); err != nil {
		if ctx.Err() == nil {
			b.setError(err.Error())
		}
		return
	}
	b.inMu.Lock()
	b.offset = st.UpdateOffset
	b.inMu.Unlock()
	b.mu.Lock()
	b.username, b.state, b.lastErr = username, StateRunning, ""
	b.mu.Unlock()
	b.log.Info("telegram: bridge running", "bot", "@"+username, "mode", st.Mode)

	relayFrom := b.off.Hub().Last()
	if st.RelayCursor != nil {
		relayFrom = *st.RelayCursor
	} else if _, err := b.db.Transact(ctx, func(tx *store.Tx) error { return tx.SetTelegramRelayCursor(relayFrom) }); err != nil {
		b.setError("cannot start the relay: " + err.Error())
		return
	}
	var wg sync.WaitGroup
	loops := []func(context.Context){
		func(ctx context.Context) { b.relay(ctx, relayFrom, resign) },
		func(ctx context.Context) { b.deliverLoop(ctx, cl, cancel) },
	}
	if st.Mode == ModePolling {
		loops = append(loops, func(ctx context.Context) { b.pollLoop(ctx, cl, cancel) })
	}
	for _, loop := range loops {
		wg.Add(1)
		go func() { defer wg.Done(); loop(ctx) }()
	}
	wg.Wait()
}

// setupMode removes a webhook for polling, or registers ours.
func (b *Bridge) setupMode(ctx context.Context, cl *client, st store.TelegramBot) error {
	callCtx, done := context.WithTimeout(ctx, 30*time.Second)
	defer done()
	if st.Mode == ModeWebhook {
		if err := cl.setWebhook(callCtx, st.WebhookURL, st.WebhookSecret); err != nil {
			return fmt.Errorf("setWebhook failed: %s", redact(err.Error(), cl.token))
		}
		return nil
	}
	if err := cl.deleteWebhook(callCtx); err != nil {
		return fmt.Errorf("deleteWebhook failed: %s", redact(err.Error(), cl.token))
	}
	return nil
}

// unauthorized records that Telegram refused the token.
func (b *Bridge) unauthorized() {
	b.setError("Telegram refused the bot token (401 Unauthorized): it is wrong or was revoked. Set a new token from @BotFather.")
	b.log.Error("telegram: the bot token was refused (401); the bridge is stopped until a new token is set")
}

func (b *Bridge) setError(msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state, b.lastErr = StateError, msg
}

// backoff is the delay before retry number attempt (0-based).
func (b *Bridge) backoff(attempt int) time.Duration {
	d := time.Second
	for i := 0; i < attempt && d < b.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, b.cfg.MaxBackoff)
}

// sleep waits d, until ctx ends (returning its error).
func (b *Bridge) sleep(ctx context.Context, d time.Duration) error {
	if b.cfg.Sleep != nil {
		return b.cfg.Sleep(ctx, d)
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

func (b *Bridge) now() time.Time { return b.cfg.Now().UTC() }

// wakeOutbox tells the outbox that rows are waiting.
func (b *Bridge) wakeOutbox() {
	select {
	case b.poke <- struct{}{}:
	default:
	}
}

// Status reports the bridge's state. The token is shown as a hint only.
func (b *Bridge) Status(ctx context.Context) (view.TelegramStatus, error) {
	st, err := b.db.TelegramBot(ctx)
	if err != nil {
		return view.TelegramStatus{}, err
	}
	counts, err := b.db.TelegramOutboxCounts(ctx)
	if err != nil {
		return view.TelegramStatus{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s := view.TelegramStatus{State: b.state, Error: b.lastErr, Mode: st.Mode, TokenHint: Hint(st.Token), TokenFromEnv: b.cfg.Env.Token != "",
		BotUsername: st.BotUsername, WebhookURL: st.WebhookURL, WebhookPath: bullpen.TelegramWebhookPath, UpdateOffset: st.UpdateOffset,
		Outbox: counts}
	if st.RelayCursor != nil {
		s.RelayCursor = *st.RelayCursor
	}
	return s, nil
}

// Hint shows the end of a secret: "…abcd".
func Hint(secret string) string {
	if secret == "" {
		return ""
	}
	if len(secret) <= 8 {
		return "…"
	}
	return "…" + secret[len(secret)-4:]
}

// isUserError reports whether err is one to show a Telegram user rather
// than retry.
func isUserError(err error) bool {
	var e *bullpen.Error
	return errors.As(err, &e) && e.Code != bullpen.EINTERNAL
}
