package web

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/gofiber/fiber/v2"
)

// Sandboxes is all that the sandbox and image API calls;
// *sandboxes.Service provides it. Services takes it as one value, so main
// wires one service; each handler file declares, and holds, only the part
// it calls. Every method takes the acting member and answers ENOTFOUND for
// a sandbox the member may not see.
type Sandboxes interface {
	SandboxLifecycle
	SandboxPorts
	SandboxExec
	SandboxHistory
	SandboxRun
	SandboxFiles
	SandboxImages
	SandboxSettings
}

// SandboxLifecycle is what the handlers of this file call: create, find,
// list and change the state of sandboxes.
type SandboxLifecycle interface {
	Create(ctx context.Context, actor bullpen.Member, spec sandbox.Spec) (sandbox.Info, error)
	Get(ctx context.Context, actor bullpen.Member, idOrName string) (sandbox.Info, error)
	List(ctx context.Context, actor bullpen.Member, tags map[string]string) ([]sandbox.Info, error)
	Terminate(ctx context.Context, actor bullpen.Member, id string) error
	Pause(ctx context.Context, actor bullpen.Member, id string) error
	Resume(ctx context.Context, actor bullpen.Member, id string) error
	Stop(ctx context.Context, actor bullpen.Member, id string) error
	Start(ctx context.Context, actor bullpen.Member, id string) error
	Stats(ctx context.Context, actor bullpen.Member, id string) (sandbox.Usage, error)
	Snapshot(ctx context.Context, actor bullpen.Member, id, name string) (bullpen.ImageRef, error)
}

// sandboxAPI holds the one sandbox service once per handler file, each
// typed as only what that file calls.
type sandboxAPI struct {
	boxes    SandboxLifecycle
	ports    SandboxPorts
	exec     SandboxExec
	history  SandboxHistory
	run      SandboxRun
	files    SandboxFiles
	images   SandboxImages
	settings SandboxSettings
}

func newSandboxAPI(sb Sandboxes) sandboxAPI {
	if sb == nil {
		return sandboxAPI{}
	}
	return sandboxAPI{boxes: sb, ports: sb, exec: sb, history: sb, run: sb, files: sb, images: sb, settings: sb}
}

// sandboxRoutes registers the sandbox and image API.
func (s *Server) sandboxRoutes(api fiber.Router) {
	sb := api.Group("/sandboxes", s.needSandboxes)
	sb.Get("", s.listSandboxes)
	sb.Post("", s.createSandbox)
	sb.Get("/:id", s.getSandbox)
	sb.Delete("/:id", s.terminateSandbox)
	sb.Post("/:id/pause", s.sandboxAction(SandboxLifecycle.Pause))
	sb.Post("/:id/resume", s.sandboxAction(SandboxLifecycle.Resume))
	sb.Post("/:id/stop", s.sandboxAction(SandboxLifecycle.Stop))
	sb.Post("/:id/start", s.sandboxAction(SandboxLifecycle.Start))
	sb.Get("/:id/stats", s.sandboxStats)
	sb.Post("/:id/snapshot", s.snapshotSandbox)
	sb.Post("/:id/exec", s.execSandbox)
	sb.Get("/:id/exec/ws", s.execWSUpgrade, s.execWS())
	sb.Get("/:id/execs", s.listSandboxExecs)
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
	v := sandboxView{ID: in.ID, Name: bullpen.SandboxName(in.Name, in.Tags), OwnerID: bullpen.SandboxOwner(in.Tags), Tags: bullpen.SandboxUserTags(in.Tags),
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
	return withBody(c, http.StatusCreated, func(ctx context.Context, me bullpen.Member, in specIn) (sandboxView, error) {
		spec, err := in.spec()
		if err != nil {
			return sandboxView{}, err
		}
		info, err := s.sb.boxes.Create(ctx, me, spec)
		return viewSandbox(info), err
	})
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
	infos, err := s.sb.boxes.List(ctx, me, tags)
	if err != nil {
		return err
	}
	withStats := c.QueryBool("stats")
	out := make([]sandboxView, 0, len(infos))
	for _, in := range infos {
		v := viewSandbox(in)
		if withStats && in.State != sandbox.StateStopped {
			if u, err := s.sb.boxes.Stats(ctx, me, in.ID); err == nil {
				v.Usage = &u
			}
		}
		out = append(out, v)
	}
	return c.JSON(list(out))
}

// view finds a sandbox and shows it as the API does.
func (s *Server) view(ctx context.Context, me bullpen.Member, id string) (sandboxView, error) {
	info, err := s.sb.boxes.Get(ctx, me, id)
	return viewSandbox(info), err
}

func (s *Server) getSandbox(c *fiber.Ctx) error { return keyed(c, pathName, s.view) }

func (s *Server) terminateSandbox(c *fiber.Ctx) error {
	return keyedDo(c, pathName, s.sb.boxes.Terminate)
}

// sandboxAction runs a lifecycle change and answers with the sandbox after it.
func (s *Server) sandboxAction(fn func(SandboxLifecycle, context.Context, bullpen.Member, string) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		return keyed(c, pathName, func(ctx context.Context, me bullpen.Member, id string) (sandboxView, error) {
			if err := fn(s.sb.boxes, ctx, me, id); err != nil {
				return sandboxView{}, err
			}
			return s.view(ctx, me, id)
		})
	}
}

func (s *Server) sandboxStats(c *fiber.Ctx) error { return keyed(c, pathName, s.sb.boxes.Stats) }

// snapshotIn names a snapshot; snapshotView is the image it made.
type (
	snapshotIn struct {
		Name string `json:"name"`
	}
	snapshotView struct {
		Image string `json:"image"` // the image's ID
		Name  string `json:"name"`  // the name to create from (--image NAME)
	}
)

func (s *Server) snapshotSandbox(c *fiber.Ctx) error {
	return keyedBody(c, http.StatusCreated, pathName, func(ctx context.Context, me bullpen.Member, id string, in snapshotIn) (snapshotView, error) {
		ref, err := s.sb.boxes.Snapshot(ctx, me, id, in.Name)
		return snapshotView{Image: ref.ID, Name: ref.Name}, err
	})
}
