package e2b

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// Boxes is what the E2B surface calls of the sandbox service
// (*sandboxes.Service provides it). Every method takes the acting member
// and answers ENOTFOUND for a sandbox the member may not see.
type Boxes interface {
	Create(ctx context.Context, actor bullpen.Member, spec sandbox.Spec) (sandbox.Info, error)
	Get(ctx context.Context, actor bullpen.Member, idOrName string) (sandbox.Info, error)
	List(ctx context.Context, actor bullpen.Member, tags map[string]string) ([]sandbox.Info, error)
	Terminate(ctx context.Context, actor bullpen.Member, id string) error
	Pause(ctx context.Context, actor bullpen.Member, id string) error
	Resume(ctx context.Context, actor bullpen.Member, id string) error
	Start(ctx context.Context, actor bullpen.Member, id string) error
	SetTimeout(ctx context.Context, actor bullpen.Member, id string, d time.Duration) error
	Stats(ctx context.Context, actor bullpen.Member, id string) (sandbox.Usage, error)

	Exec(ctx context.Context, actor bullpen.Member, id string, req sandbox.ExecRequest) (bullpen.SandboxCommand, error)

	ReadFile(ctx context.Context, actor bullpen.Member, id, path string) (io.ReadCloser, error)
	WriteFile(ctx context.Context, actor bullpen.Member, id, path string, src io.Reader, mode os.FileMode) error
	ListFiles(ctx context.Context, actor bullpen.Member, id, dir string) ([]sandbox.FileInfo, error)
	Stat(ctx context.Context, actor bullpen.Member, id, path string) (sandbox.FileInfo, error)
	Mkdir(ctx context.Context, actor bullpen.Member, id, path string, parents bool) error
	Remove(ctx context.Context, actor bullpen.Member, id, path string, recursive bool) error
	Rename(ctx context.Context, actor bullpen.Member, id, from, to string) error

	PublishPort(ctx context.Context, actor bullpen.Member, id string, port int) (sandbox.PortInfo, error)
	ListPorts(ctx context.Context, actor bullpen.Member, id string) ([]sandbox.PortInfo, error)
}

// Keys resolves an E2B API key to its member (*office.Office provides it).
type Keys interface {
	AuthenticateE2B(ctx context.Context, key string) (bullpen.Member, error)
}

// Config configures the E2B surface.
type Config struct {
	Boxes Boxes
	Keys  Keys
	// DefaultTimeout is a sandbox's lifetime when the create names none
	// (E2B's default: 5 minutes).
	DefaultTimeout time.Duration
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// EnvdVersion is the envd version the sandboxes report: the SDKs turn
// features on by it. 0.5.7 has octet-stream uploads and closing stdin.
const EnvdVersion = "0.5.7"

// EnvdPort is the port of envd in an E2B sandbox; a sandbox-URL request
// for any other port goes to that port in the sandbox.
const EnvdPort = 49983

// Server serves the E2B surface. Close ends its processes' streams.
type Server struct {
	cfg   Config
	log   *slog.Logger
	procs *registry
	ctx   context.Context // ends at Close; commands started here run under it
	stop  context.CancelFunc
	api   http.Handler
	envd  http.Handler
}

// New builds the E2B surface.
func New(cfg Config) *Server {
	if cfg.DefaultTimeout <= 0 {
		cfg.DefaultTimeout = 5 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, log: cfg.Logger, procs: newRegistry()}
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.api = s.apiRoutes()
	s.envd = s.envdRoutes()
	return s
}

// Close kills the commands started through the surface and ends their
// streams.
func (s *Server) Close() { s.stop() }

// API is the control plane's handler: point E2B_API_URL at where it is
// mounted.
func (s *Server) API() http.Handler { return s.api }

// Sandbox is the sandbox side's handler (envd and published ports):
// point E2B_SANDBOX_URL at where it is mounted.
func (s *Server) Sandbox() http.Handler { return s.envd }
