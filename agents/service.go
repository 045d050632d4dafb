// Package agents runs Bullpen's AI agents: role specs and packs, the wake
// rules, the durable inbox and its router, one worker per agent under a
// global concurrency limit, the turn runtime with its tools, budgets, loop
// control and approvals. It reaches the wiki and the sandboxes through the
// small interfaces it declares (Wiki, Sandboxes) and the models through
// package llm.
//
// # Crashes: a turn resumes, it does not start over
//
// Each turn keeps a journal (store.Step rows) keyed by its anchor wake, the
// oldest of its wakes, which every re-run of the turn after a crash
// shares: the wakes and work packet of its first run, each model answer,
// and each tool call's outcome. Office effects (a posted message, a notice,
// an approval request, a wiki save, a task change, a memory entry) write
// their journal row in the transaction of the effect itself, and the
// row's key is unique, so an effect and its record commit together or
// not at all, and a second attempt rolls back. A tool declares its
// effect (Tool.Effect), and one with an office effect writes only through
// Call.Write, which hands its backend's "with tx" hook the record
// (effect.go). After a restart the reclaimed wakes start a new turn
// that replays the journal: recorded model answers are not asked again,
// recorded tool results are returned to the model as they were, and the
// turn goes on from the first step it has no record of.
//
// Resuming was chosen over re-running with effects skipped by key: a re-run
// would ask the model again for steps already done (tokens and time spent
// twice), and a model asked again may choose different tool calls whose
// keys no longer match, so skipping could not be exact. Replaying makes
// the resumed turn see exactly what the first run saw.
//
// A sandbox command has effects outside the database, so it journals a
// "started" row before it runs; started without an outcome means the
// process died during it, and the model is told the command was
// interrupted and may have partly run. It is never run again unseen.
// Model calls are at-least-once: a call whose answer was not yet recorded
// is made again (no office effect, only tokens).
//
// # Database outages
//
// A write the database refuses for an outage (store.IsOutage) is tried
// again with backoff; a turn that cannot go on is cut off and re-driven
// by its own worker as soon as the database answers, before any newer
// wake of its agent, and replays its journal (outage.go).
//
// # Hung providers
//
// Model calls have connect, first-byte and idle timeouts and each turn a
// deadline (Config.Timeouts from the environment, overridden per role).
// While a call waits, the agent's live status counts the seconds (an
// ephemeral agent.status event) and after bullpen.Timeouts.Notice a notice says so
// in the channel, once per call. A turn waiting on its model gives its
// office-wide concurrency slot back and holds a slot of its provider's own
// share instead: the office-wide limit bounds the work Bullpen itself does
// (tools, sandboxes, the database), the provider share bounds what one
// provider can hold, so a provider that hangs fills its share and never
// the office.
//
// # Tools: one registry
//
// Every tool is an entry of one Registry (registry.go): name, description,
// JSON Schema and handler. Each feature registers its own entries into the
// service's table (registerOfficeTools, registerWikiTools,
// registerSandboxTools), and only when its backend is configured. A role
// is offered exactly the entries its allow-list names (Registry.Offer),
// and a call is served only through Registry.Allowed, which refuses any
// other name; the handler sees a Call (the authenticated member, its role,
// where it was woken, and Write, the one door for an office write), never
// the turn.
//
// The entries are built here, in agents, from the consumer interfaces it
// declares (Wiki, Sandboxes), rather than registered by packages wiki and
// sandboxes, because what makes an entry belongs to the runtime: the
// schemas and descriptions are the cache-critical prompt prefix whose
// tokens the runtime budgets, and the handlers need its rules (strict
// arguments, result clipping, the network approval of sandbox_exec,
// Call.Write that commits a call's record with its effect). A wiki that
// registered its own entries would have to import the runtime to know
// these, inverting the dependency; this way wiki and sandboxes stay
// providers of small typed interfaces (*wiki.Wiki is an agents.Wiki as it
// is) and main only passes them in.
//
// The MCP endpoint serves the same entries: it lists ToolsFor(member) (the
// member's role allow-list from this registry) and calls through
// Tools().Allowed with a Call built from the token's member, through the
// same recording path as a built-in call (a tool-call row and its
// tool.started and tool.finished events, then the role's approvals and
// each Tool's Approval), so a call is attributed and approved the same way
// whichever door it came through.
//
// # Idle agents cost nothing
//
// An agent with no wake runs nothing: its worker sleeps on its poke
// channel (no timer, no poll), the router blocks on the event feed, and
// no model is called without a wake. Its sandbox workspace is stopped
// after the idle timeout (its files are kept), so an idle office holds no
// sandbox memory. A built-in turn that will use the workspace starts it
// again as the turn begins (warmSandbox, through Warmer), so the boot
// overlaps building the prompt and the first model call instead of
// delaying the first tool call.
//
// # Two ways to the data: office for members' acts, store for the runtime's
//
// Config takes both the Office and the *store.DB it runs on, and each use
// has one of them for a reason:
//
//   - Through office, checked against the actor: everything done as a
//     member. The tools an agent calls (read_channel, read_thread, post,
//     channel lookups) run as the agent's member, so office applies the
//     same visibility checks as to the agent's token on the API; the
//     agent's replies and notices (PostWith, with the journal
//     row committed by its hook); and the management acts a human does
//     (hire makes the member and its token, edits, the DM), so an admin
//     check and the member and channel events stay in office's one place.
//   - Straight to store: the runtime's own tables (agents, wakes, turns,
//     steps, tool calls, approvals, cursors, usage) and reads the runtime
//     makes as the system rather than as a member. The router sees every
//     message to decide who wakes (the channel, its members and thread
//     authors, the hop chain tail), before any agent is involved, so there
//     is no actor to check; a woken turn loads its trigger messages, its
//     channel and the recent context of the conversation it was woken in,
//     which the wake rules already decided it may see (wake.go: never a
//     DM it is not part of). Going through office here would need a
//     system actor that passes every check: the store with extra steps.
package agents

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
)

// Config configures the agents service.
type Config struct {
	// Office serves the actor-checked operations (see the package doc);
	// DB is the same database, for the agents' own tables. Both required.
	Office  *office.Office
	DB      *store.DB
	Catalog *Catalog // nil: the built-in packs only
	// Providers by kind ("openai", "anthropic", "scripted"). A role names
	// one; an empty name means DefaultProvider. No provider at all means
	// mentioned agents answer with a notice saying so.
	Providers       map[string]llm.Provider
	DefaultProvider string
	// ProviderSource, when set, replaces Providers: each turn asks it for
	// its provider, so settings changes apply from the next turn.
	ProviderSource ProviderSource
	// Simulation labels every agent message as coming from a scripted
	// simulation (bullpen demo).
	Simulation bool
	Wiki       Wiki      // nil: no wiki tools
	Sandboxes  Sandboxes // nil: no sandbox tools
	// Memory recalls each agent's entries into its work packets and
	// serves the memory tools; nil: no memory.
	Memory Memory
	// Tasks serves the task tools and learns of each finished turn woken
	// in a task's thread (nil: no task tools).
	Tasks Tasks
	// CLIs runs the agent CLIs of roles with a runtime other than builtin,
	// with TurnTokens for their per-turn credentials; without both such
	// roles' turns fail with a notice saying why.
	CLIs       CLISandboxes
	TurnTokens TurnTokens
	// CLILender lets an agent CLI that runs as a server (opencode) serve
	// turn after turn (cliserver.go); nil runs such CLIs once per turn.
	CLILender TurnLender

	// Concurrency bounds the turns working at once, office-wide (default
	// 4). A turn waiting on its model gives its slot back and holds one of
	// its provider's ProviderConcurrency slots (default 2×Concurrency)
	// instead, so hung model calls never starve agents that could run.
	Concurrency         int
	ProviderConcurrency int
	// Timeouts are the office-wide model-call timeouts, turn deadline and
	// waiting notice (TimeoutsFromEnv); a role's timeouts override them.
	Timeouts  bullpen.Timeouts
	HopBudget int           // agent→agent messages per thread without a human (default 8)
	Lease     time.Duration // a running turn's lease, renewed while it runs (default 2 min)
	Sweep     time.Duration // how often expired leases are looked for (default 30 s)
	// OutageWait is how long a turn retries a write the database refuses
	// before it is cut off and re-driven (outage.go; default Lease/2).
	OutageWait time.Duration
	// SharedDatabase is true when several processes run agents on one
	// PostgreSQL database: then only expired leases are reclaimed, never
	// another live process's turns.
	SharedDatabase bool
	// Placement runs each agent's turns on the replica that holds its
	// workspace (placement.go): on when the database is shared and the
	// sandboxes are local, each replica's on its own disk. ReplicaDir is
	// the data dir that keeps this replica's ID across restarts.
	Placement   bool
	ReplicaDir  string
	MaxCoalesce int // wakes folded into one turn (default 10)
	// Context bounds for the work packet.
	ChannelContext int // top-level messages (default 6)
	ThreadContext  int // thread messages (default 10)
	WikiHits       int // wiki search hits (default 3)
	MaxOutput      int // output tokens per model call (default 2048)
	// TurnRetention is how long the model calls (and large tool results)
	// of a turn are kept for the inspector (default 30 days); PruneEvery
	// how often older ones are removed (default 1 h).
	TurnRetention time.Duration
	PruneEvery    time.Duration

	Now    func() time.Time
	Logger *slog.Logger
}

func (c *Config) defaults() {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.Concurrency, 4)
	def(&c.ProviderConcurrency, 2*c.Concurrency)
	def(&c.HopBudget, 8)
	def(&c.MaxCoalesce, 10)
	def(&c.ChannelContext, 6)
	def(&c.ThreadContext, 10)
	def(&c.WikiHits, 3)
	def(&c.MaxOutput, 2048)
	if c.Lease == 0 {
		c.Lease = 2 * time.Minute
	}
	if c.Sweep == 0 {
		c.Sweep = 30 * time.Second
	}
	if c.OutageWait <= 0 {
		c.OutageWait = c.Lease / 2
	}
	if c.TurnRetention <= 0 {
		c.TurnRetention = DefaultTurnRetention
	}
	if c.PruneEvery <= 0 {
		c.PruneEvery = defaultPruneEvery
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Service is the agents runtime, a façade over its parts (see
// docs/architecture.md): Start runs the router, the workers and the
// sweepers; the embedded parts serve the API (hire/fire/edit, sessions,
// approvals, the inspector, the gateway's turn side). Service itself
// declares only the run, the catalog, the tool registry's doors and the
// CLI runtime.
type Service struct {
	// The parts. The embedded ones serve the API through Service.
	*turnLoop                     // the turn: journal, preparation, the built-in loop, finishing
	*desk                         // hire, edit, fire, sessions, approvals' answers, the demo
	inspector                     // the turn inspector
	providerSet                   // whether the office can think
	*statuses                     // each agent's live status
	*toolCalls                    // a turn's tool calls under its journal
	*gatewayBudgets               // the gateway's turn side: reservations, budgets, upstreams
	notifier                      // system notices
	router          *router       // messages → wakes
	pruner          pruner        // turn records past retention
	models          *modelCalls   // a turn's model calls
	tools           *Registry     // every tool, each feature's served by its own part
	dir             directory     // who is who, for prompts
	mem             memoryTools   // the work packet's memory section
	creds           *credentials  // agent → its runtime token secret
	gw              *gatewayTurns // CLI turns' model calls through the gateway

	cfg   Config
	off   *office.Office
	db    *store.DB
	cat   *Catalog
	log   *slog.Logger
	owner string // this process's turn-lease owner ID
	sem   chan struct{}

	life    *lifecycle // from Start to Close
	workers *workers   // one per agent with wakes, under sem
	servers cliServers // agent CLIs running as servers (cliserver.go)
}

// New returns a service; Start runs it.
func New(cfg Config) (*Service, error) {
	if cfg.Office == nil || cfg.DB == nil {
		return nil, fmt.Errorf("agents: no office or no database")
	}
	cfg.defaults()
	if cfg.Catalog == nil {
		cat, err := LoadCatalog("")
		if err != nil {
			return nil, err
		}
		cfg.Catalog = cat
	}
	b := make([]byte, 8)
	rand.Read(b)
	s := &Service{cfg: cfg, off: cfg.Office, db: cfg.DB, cat: cfg.Catalog, log: cfg.Logger,
		owner: hex.EncodeToString(b), sem: make(chan struct{}, cfg.Concurrency),
		life: &lifecycle{}, statuses: newStatuses(cfg.Now),
	}
	var err error
	if s.tools, err = builtinTools(cfg); err != nil {
		return nil, err
	}
	// The credential this process mints for each agent. Minting one
	// revokes the earlier ones of that name; processes that share the
	// database each use their own name, so that one does not revoke the
	// credential another's running turn holds.
	tokenName := runtimeToken
	if cfg.SharedDatabase {
		tokenName += " " + s.owner
	}
	s.creds = newCredentials(cfg.DB, cfg.Office, tokenName)
	s.notifier = notifier{poster: cfg.Office, log: cfg.Logger}
	s.dir = directory{db: cfg.DB}
	s.mem = memoryTools{mem: cfg.Memory, dir: s.dir}
	s.providerSet = providerSet{src: providersOf(cfg), simulation: cfg.Simulation}
	s.inspector = inspector{db: cfg.DB, now: cfg.Now}
	s.pruner = pruner{db: cfg.DB, retention: cfg.TurnRetention, every: cfg.PruneEvery, now: cfg.Now, log: cfg.Logger}
	s.gw = &gatewayTurns{}
	s.gatewayBudgets = &gatewayBudgets{gw: s.gw, db: cfg.DB, now: cfg.Now, log: cfg.Logger,
		defaultProvider: cfg.DefaultProvider}
	s.models = &modelCalls{notifier: s.notifier, hub: cfg.Office.Hub(), rec: cfg.DB, status: s.statuses, now: cfg.Now,
		sem: s.sem, perProvider: cfg.ProviderConcurrency, slots: map[string]chan struct{}{}}
	s.toolCalls = &toolCalls{tools: s.tools, db: partDB[callTx]{cfg.DB}, status: s.statuses, now: cfg.Now}
	s.turnLoop = &turnLoop{statuses: s.statuses, notifier: s.notifier, toolCalls: s.toolCalls, gatewayBudgets: s.gatewayBudgets,
		providerSet: s.providerSet, cliTurner: s, cfg: cfg, db: cfg.DB, off: cfg.Office, log: cfg.Logger, tools: s.tools,
		dir: s.dir, mem: s.mem, creds: s.creds, models: s.models, life: s.life}
	s.toolCalls.writes, s.gatewayBudgets.stops = s.turnLoop, s.turnLoop
	place, err := newPlacer(cfg)
	if err != nil {
		return nil, err
	}
	s.workers = &workers{placer: place, notifier: s.notifier, db: cfg.DB, life: s.life, sem: s.sem, owner: s.owner, lease: cfg.Lease,
		sweep: cfg.Sweep, maxCoalesce: cfg.MaxCoalesce, now: cfg.Now, log: cfg.Logger, turns: s.turnLoop, reservations: s,
		pokes: map[int64]chan struct{}{}}
	s.router = &router{notifier: s.notifier, db: partDB[routerTx]{cfg.DB}, off: cfg.Office, log: cfg.Logger, mem: cfg.Memory,
		hopBudget: cfg.HopBudget, shared: cfg.SharedDatabase, wake: s.workers}
	s.desk = &desk{cat: cfg.Catalog, off: cfg.Office, db: cfg.DB, tasks: cfg.Tasks, status: s.statuses, creds: s.creds,
		rt: s, wake: s.workers}
	return s, nil
}

// Catalog returns the roles one can hire from.
func (s *Service) Catalog() *Catalog { return s.cat }

// Roles lists the catalog's roles, by ID.
func (s *Service) Roles() []bullpen.RoleInfo { return s.cat.List() }

// RoleProblems lists the role files that failed to load, with why.
func (s *Service) RoleProblems() []bullpen.RoleProblem { return s.cat.Problems() }

// Start reclaims turns a previous run left behind, then runs the router,
// the lease sweeper and a worker per agent with pending wakes. It returns
// at once; Close stops everything.
func (s *Service) Start(ctx context.Context) error {
	if _, err := s.life.start(); err != nil {
		return err
	}
	lock, err := s.router.takeRouterLock(ctx) // nil: another replica routes
	if err != nil {
		return err
	}
	if p := s.workers.placer; p != nil {
		if err := p.beat(ctx); err != nil { // alive before the first claim
			lock.Release()
			return err
		}
		s.life.spawn(p.beatLoop)
	}
	since, err := s.startLocked(ctx, lock)
	if err != nil {
		lock.Release()
		return err
	}
	s.life.spawn(func(ctx context.Context) {
		if err := s.cat.Watch(ctx, s.log); err != nil {
			s.log.Warn("agents: role files are not watched; restart to load changes", "err", err)
		}
	})
	s.life.spawn(func(ctx context.Context) { s.router.runRouter(ctx, lock, since) })
	s.life.spawn(s.workers.sweepLoop)
	s.life.spawn(s.pruner.pruneLoop)
	if s.cfg.SharedDatabase {
		s.life.spawn(s.router.watchWakes)
	}
	ids, err := s.db.PendingAgents(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		s.workers.poke(id)
	}
	return nil
}

// Routed returns the last event sequence the router has handled.
func (s *Service) Routed() int64 { return s.router.routed.Load() }

// Close stops the router and the workers. A turn in flight stops where it
// is; its wakes stay claimed until a restart (or lease expiry) re-queues
// them.
func (s *Service) Close() { s.life.stop() }

// audience returns who may see events about a channel: nil for public
// channels, the members of a DM.
func audience(c bullpen.Channel) []int64 {
	if c.Kind == bullpen.ChannelDM {
		return c.MemberIDs
	}
	return nil
}
