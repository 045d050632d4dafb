package web

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/image"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/gofiber/fiber/v2"
)

// Sandboxes is what the sandbox API needs; *sandboxes.Service provides it.
// Every method takes the acting member and answers ENOTFOUND for a sandbox
// the member may not see.
type Sandboxes interface {
	Create(ctx context.Context, actor bullpen.Member, spec sandbox.Spec) (sandbox.Info, error)
	Get(ctx context.Context, actor bullpen.Member, idOrName string) (sandbox.Info, error)
	List(ctx context.Context, actor bullpen.Member, tags map[string]string) ([]sandbox.Info, error)
	Terminate(ctx context.Context, actor bullpen.Member, id string) error
	Pause(ctx context.Context, actor bullpen.Member, id string) error
	Resume(ctx context.Context, actor bullpen.Member, id string) error
	Stop(ctx context.Context, actor bullpen.Member, id string) error
	Start(ctx context.Context, actor bullpen.Member, id string) error
	Stats(ctx context.Context, actor bullpen.Member, id string) (sandbox.Usage, error)
	Snapshot(ctx context.Context, actor bullpen.Member, id, name string) (string, error)

	Exec(ctx context.Context, actor bullpen.Member, id string, req sandbox.ExecRequest) (*sandboxes.Exec, error)
	Run(ctx context.Context, actor bullpen.Member, id string, req sandbox.ExecRequest, outputLimit int64) (sandboxes.RunResult, error)

	ReadFile(ctx context.Context, actor bullpen.Member, id, path string) (io.ReadCloser, error)
	WriteFile(ctx context.Context, actor bullpen.Member, id, path string, src io.Reader, mode os.FileMode) error
	ListFiles(ctx context.Context, actor bullpen.Member, id, dir string) ([]sandbox.FileInfo, error)
	Stat(ctx context.Context, actor bullpen.Member, id, path string) (sandbox.FileInfo, error)
	Mkdir(ctx context.Context, actor bullpen.Member, id, path string, parents bool) error
	Remove(ctx context.Context, actor bullpen.Member, id, path string, recursive bool) error
	Rename(ctx context.Context, actor bullpen.Member, id, from, to string) error

	PublishPort(ctx context.Context, actor bullpen.Member, id string, port int) (sandbox.PortInfo, error)
	ListPorts(ctx context.Context, actor bullpen.Member, id string) ([]sandbox.PortInfo, error)
	RevokePort(ctx context.Context, actor bullpen.Member, id string, port int) error

	Images(ctx context.Context, actor bullpen.Member) ([]*image.Image, error)
	PublishImage(ctx context.Context, actor bullpen.Member, ref string) (*image.Image, error)
	PullImage(ctx context.Context, actor bullpen.Member, ref, name string) (*image.Image, error)
	ImportImage(ctx context.Context, actor bullpen.Member, r io.Reader, name string) (*image.Image, error)
	RemoveImage(ctx context.Context, actor bullpen.Member, ref string) error
}

var _ Sandboxes = (*sandboxes.Service)(nil)

// sandboxRoutes registers the sandbox and image API.
func (s *Server) sandboxRoutes(api fiber.Router) {
	sb := api.Group("/sandboxes", s.needSandboxes)
	sb.Get("", s.listSandboxes)
	sb.Post("", s.createSandbox)
	sb.Get("/:id", s.getSandbox)
	sb.Delete("/:id", s.terminateSandbox)
	sb.Post("/:id/pause", s.sandboxAction(Sandboxes.Pause))
	sb.Post("/:id/resume", s.sandboxAction(Sandboxes.Resume))
	sb.Post("/:id/stop", s.sandboxAction(Sandboxes.Stop))
	sb.Post("/:id/start", s.sandboxAction(Sandboxes.Start))
	sb.Get("/:id/stats", s.sandboxStats)
	sb.Post("/:id/snapshot", s.snapshotSandbox)
	sb.Post("/:id/exec", s.execSandbox)
	sb.Get("/:id/exec/ws", s.execWSUpgrade, s.execWS())
	sb.Post("/:id/run", s.runSandbox)
	sb.Get("/:id/files", s.readSandboxFile)
	sb.Put("/:id/files", s.writeSandboxFile)
	sb.Delete("/:id/files", s.removeSandboxFile)
	sb.Get("/:id/files/list", s.listSandboxFiles)
	sb.Get("/:id/files/stat", s.statSandboxFile)
	sb.Post("/:id/files/mkdir", s.mkdirSandbox)
	sb.Post("/:id/files/rename", s.renameSandboxFile)
	sb.Get("/:id/ports", s.listSandboxPorts)
	sb.Post("/:id/ports", s.publishSandboxPort)
	sb.Delete("/:id/ports/:port", s.revokeSandboxPort)

	img := api.Group("/images", s.needSandboxes)
	img.Get("", s.listImages)
	img.Post("/pull", s.pullImage)
	img.Post("/import", s.importImage)
	img.Post("/*", s.publishImage)
	img.Delete("/*", s.removeImage)
}

// needSandboxes answers EUNAVAILABLE when the server runs without them.
func (s *Server) needSandboxes(c *fiber.Ctx) error {
	if s.svc.Sandboxes == nil {
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "sandboxes are unavailable on this server: they need root (plus cgroups and overlayfs); see the server log")
	}
	return c.Next()
}

// sandboxView is a sandbox as the API shows it: the owner apart from the
// tags, durations in seconds, never secret values.
type sandboxView struct {
	ID           string                `json:"id"`
	Name         string                `json:"name,omitempty"`
	OwnerID      int64                 `json:"owner_id"`
	Tags         map[string]string     `json:"tags"`
	Image        string                `json:"image"`
	State        sandbox.State         `json:"state"`
	Workdir      string                `json:"workdir"`
	CPU          float64               `json:"cpu"`
	MemoryBytes  int64                 `json:"memory_bytes"`
	Pids         int64                 `json:"pids"`
	DiskBytes    int64                 `json:"disk_bytes"`
	Env          map[string]string     `json:"env,omitempty"`
	SecretNames  []string              `json:"secret_names,omitempty"`
	Timeout      float64               `json:"timeout"`
	IdleTimeout  float64               `json:"idle_timeout"`
	IdleAction   sandbox.IdleAction    `json:"idle_action"`
	Network      sandbox.NetworkPolicy `json:"network"`
	AllowedCIDRs []string              `json:"allowed_cidrs,omitempty"`
	Ports        []sandbox.PortInfo    `json:"ports"`
	CreatedAt    time.Time             `json:"created_at"`
	StartedAt    *time.Time            `json:"started_at,omitempty"`
	ExpiresAt    *time.Time            `json:"expires_at,omitempty"`
	LastActivity time.Time             `json:"last_activity"`
	Usage        *sandbox.Usage        `json:"usage,omitempty"`

	// DiskUnbounded: the operator turned disk quotas off; no disk limit.
	DiskUnbounded bool  `json:"disk_unbounded"`
	Inodes        int64 `json:"inodes,omitempty"`
	NoFile        int64 `json:"nofile,omitempty"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func viewSandbox(in sandbox.Info) sandboxView {
	v := sandboxView{ID: in.ID, Name: sandboxes.NameOf(in), OwnerID: sandboxes.OwnerOf(in), Tags: sandboxes.UserTags(in),
		Image: in.Image, State: in.State, Workdir: in.Workdir, CPU: in.CPU, MemoryBytes: in.MemoryBytes,
		Pids: in.Pids, DiskBytes: in.DiskBytes, Env: in.Env, SecretNames: in.SecretNames,
		Timeout: in.Timeout.Seconds(), IdleTimeout: in.IdleTimeout.Seconds(), IdleAction: in.IdleAction,
		Network: in.Network, AllowedCIDRs: in.AllowedCIDRs, Ports: in.Ports, CreatedAt: in.CreatedAt,
		StartedAt: timePtr(in.StartedAt), ExpiresAt: timePtr(in.ExpiresAt), LastActivity: in.LastActivity,
		DiskUnbounded: in.DiskUnbounded, Inodes: in.Inodes, NoFile: in.NoFile}
	if v.Ports == nil {
		v.Ports = []sandbox.PortInfo{}
	}
	return v
}

func (s *Server) createSandbox(c *fiber.Ctx) error {
	var in specIn
	if err := decode(c, &in); err != nil {
		return err
	}
	spec, err := in.spec()
	if err != nil {
		return err
	}
	info, err := s.svc.Sandboxes.Create(c.UserContext(), actor(c), spec)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(viewSandbox(info))
}

// listSandboxes filters by ?tag=k=v (repeatable); ?stats=true adds each
// running sandbox's usage.
func (s *Server) listSandboxes(c *fiber.Ctx) error {
	tags := map[string]string{}
	for _, raw := range c.Context().QueryArgs().PeekMulti("tag") {
		k, v, ok := strings.Cut(string(raw), "=")
		if !ok || k == "" {
			return bullpen.Errorf(bullpen.EINVALID, "tag filters look like tag=key=value")
		}
		tags[k] = v
	}
	ctx, me := c.UserContext(), actor(c)
	infos, err := s.svc.Sandboxes.List(ctx, me, tags)
	if err != nil {
		return err
	}
	withStats := c.QueryBool("stats")
	out := make([]sandboxView, 0, len(infos))
	for _, in := range infos {
		v := viewSandbox(in)
		if withStats && in.State != sandbox.StateStopped {
			if u, err := s.svc.Sandboxes.Stats(ctx, me, in.ID); err == nil {
				v.Usage = &u
			}
		}
		out = append(out, v)
	}
	return c.JSON(list(out))
}

func (s *Server) getSandbox(c *fiber.Ctx) error {
	info, err := s.svc.Sandboxes.Get(c.UserContext(), actor(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(viewSandbox(info))
}

func (s *Server) terminateSandbox(c *fiber.Ctx) error {
	if err := s.svc.Sandboxes.Terminate(c.UserContext(), actor(c), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

// sandboxAction runs a lifecycle change and answers with the sandbox after it.
func (s *Server) sandboxAction(fn func(Sandboxes, context.Context, bullpen.Member, string) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx, me, id := c.UserContext(), actor(c), c.Params("id")
		if err := fn(s.svc.Sandboxes, ctx, me, id); err != nil {
			return err
		}
		info, err := s.svc.Sandboxes.Get(ctx, me, id)
		if err != nil {
			return err
		}
		return c.JSON(viewSandbox(info))
	}
}

func (s *Server) sandboxStats(c *fiber.Ctx) error {
	u, err := s.svc.Sandboxes.Stats(c.UserContext(), actor(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(u)
}

func (s *Server) snapshotSandbox(c *fiber.Ctx) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	ref, err := s.svc.Sandboxes.Snapshot(c.UserContext(), actor(c), c.Params("id"), in.Name)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(fiber.Map{"image": ref})
}

func (s *Server) listSandboxPorts(c *fiber.Ctx) error {
	ports, err := s.svc.Sandboxes.ListPorts(c.UserContext(), actor(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(list(ports))
}

func (s *Server) publishSandboxPort(c *fiber.Ctx) error {
	var in struct {
		Port int `json:"port"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	p, err := s.svc.Sandboxes.PublishPort(c.UserContext(), actor(c), c.Params("id"), in.Port)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(p)
}

func (s *Server) revokeSandboxPort(c *fiber.Ctx) error {
	port, err := idParam(c, "port")
	if err != nil {
		return err
	}
	if port > 65535 {
		return bullpen.Errorf(bullpen.EINVALID, "port must be between 1 and 65535")
	}
	if err := s.svc.Sandboxes.RevokePort(c.UserContext(), actor(c), c.Params("id"), int(port)); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}
