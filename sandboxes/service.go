// Package sandboxes puts package sandbox into the office: every sandbox has
// an owner (the member who created it), members see and act on their own
// sandboxes and human admins on all, lifecycle changes and commands become
// stored office events, and command output streams live to the dashboard
// as ephemeral events.
//
// Ownership is kept in the sandbox itself, as the reserved tag bullpen.SandboxOwnerTag, so
// it survives restarts with the sandbox's own metadata; so is the name
// (bullpen.SandboxNameTag), which is unique per owner. Tags starting with "bullpen." are
// reserved: users cannot set or filter on them. Snapshot images belong to
// whoever took them until an admin publishes them (imageowners.go), and
// agents reach their workspaces through Workspaces (agents.go).
package sandboxes

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/image"
	"github.com/bullpen-hq/bullpen/store"
)

// Config configures a Service.
type Config struct {
	// Office publishes live output; DB stores the sandbox events. Both
	// required.
	Office *office.Office
	DB     *store.DB
	// Sandbox configures the Manager; StateDir is required. OnEvent and
	// Images are set by Open.
	Sandbox sandbox.Config
	// Images is the OCI image store; nil leaves image management out.
	Images *image.Store
	// Driver opens the sandbox runtime; nil: the local one
	// (*sandbox.Manager, which needs root).
	Driver NewDriver
	// MaxPerMember bounds the live sandboxes of a member who is not an
	// admin (default 16).
	MaxPerMember int
	// RunOutputLimit caps stdout and stderr (each) that Run captures
	// by default (default 1 MiB); the rest is read and discarded.
	RunOutputLimit int64
	// MaxRunOutputLimit is the most a request may ask Run to capture per
	// stream (default 16 MiB).
	MaxRunOutputLimit int64
	// DefaultLifetime is the Timeout of a sandbox made by Create whose
	// spec sets none (0: no default). Agents' workspaces (Ensure) are
	// persistent and get none.
	DefaultLifetime time.Duration
	// LiveOutputLimit caps the bytes of one command's output sent as live
	// events (default 1 MiB); the stream to the caller is not capped.
	LiveOutputLimit int64
	Logger          *slog.Logger
}

// Service runs the office's sandboxes. Methods take the acting member,
// which the caller derived from a credential.
type Service struct {
	cfg    Config
	m      Driver
	images *image.Store
	off    *office.Office
	db     *store.DB
	log    *slog.Logger
	q      *queue
	owners *imageOwners

	createMu sync.Mutex     // serializes admissions (the per-member count and names) and Ensure
	pullMu   sync.Mutex     // one pull-on-create at a time
	pending  *pending       // creates admitted and still provisioning
	bg       sync.WaitGroup // preconnects in flight
	bufs     sync.Pool      // *[]byte read buffers of the output pumps
}

// Open opens the driver (the local Manager re-adopts sandboxes a previous
// process left, and needs root) and starts the event writer.
func Open(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Office == nil || cfg.DB == nil {
		return nil, fmt.Errorf("sandboxes: no office or no database")
	}
	if cfg.MaxPerMember <= 0 {
		cfg.MaxPerMember = 16
	}
	if cfg.RunOutputLimit <= 0 {
		cfg.RunOutputLimit = 1 << 20
	}
	if cfg.MaxRunOutputLimit < cfg.RunOutputLimit {
		cfg.MaxRunOutputLimit = max(cfg.RunOutputLimit, 16<<20)
	}
	if cfg.LiveOutputLimit <= 0 {
		cfg.LiveOutputLimit = 1 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Service{cfg: cfg, images: cfg.Images, off: cfg.Office, db: cfg.DB, log: cfg.Logger}
	s.q = newQueue()
	s.pending = newPending()
	sc := cfg.Sandbox
	sc.OnEvent = s.onEvent
	if cfg.Images != nil {
		sc.Images = cfg.Images
	}
	open := cfg.Driver
	if open == nil {
		open = openManager
	}
	m, err := open(ctx, sc)
	if err == nil {
		if s.owners, err = openImageOwners(ownersPath(cfg)); err != nil {
			m.Close()
		}
	}
	if err != nil {
		s.q.close()
		return nil, err
	}
	s.m = m
	go s.writeEvents()
	return s, nil
}

// Manager returns the underlying driver, for callers that manage
// ownership themselves. Commands run through it directly make no exec
// events and no live output; prefer the Service's methods.
func (s *Service) Manager() Driver { return s.m }

// Close stops the Manager's background work (running sandboxes keep
// running and are re-adopted at the next start) and writes the events
// still queued.
func (s *Service) Close() error {
	s.bg.Wait()
	err := s.m.Close()
	s.q.close()
	<-s.q.done
	return err
}

// seesAll reports whether actor may see and act on every sandbox: human
// admins may; agents only ever act on their own.
func seesAll(actor bullpen.Member) bool {
	return actor.IsAdmin && actor.Kind == bullpen.KindHuman
}

func canSee(actor bullpen.Member, in sandbox.Info) bool {
	return actor.ID != 0 && (seesAll(actor) || bullpen.SandboxOwner(in.Tags) == actor.ID)
}

// checkTags refuses reserved tags.
func checkTags(tags map[string]string) error {
	for k := range tags {
		if strings.HasPrefix(k, bullpen.SandboxReservedPrefix) {
			return bullpen.Errorf(bullpen.EINVALID, "tag %q is reserved (tags starting with %q are set by Bullpen)", k, bullpen.SandboxReservedPrefix)
		}
	}
	return nil
}

// Create creates a sandbox owned by actor. Tags starting with "bullpen."
// are refused (EINVALID); a member who is not an admin may have at most
// Config.MaxPerMember live sandboxes (ERATELIMIT). A spec without a
// Timeout gets Config.DefaultLifetime, so no sandbox outlives the
// operator's default unless its creator asked for that.
func (s *Service) Create(ctx context.Context, actor bullpen.Member, spec sandbox.Spec) (sandbox.Info, error) {
	if err := checkTags(spec.Tags); err != nil {
		return sandbox.Info{}, err
	}
	if spec.Timeout == 0 {
		spec.Timeout = s.cfg.DefaultLifetime
	}
	if err := s.pullIfMissing(ctx, spec.Image); err != nil {
		return sandbox.Info{}, err
	}
	if err := s.checkImage(ctx, actor, spec.Image); err != nil {
		return sandbox.Info{}, err
	}
	// Only the admission is serialized: provisioning, the slow part, runs
	// outside createMu, alongside other members' and this one's creates.
	s.createMu.Lock()
	spec, release, err := s.admit(ctx, actor, spec, nil)
	s.createMu.Unlock()
	if err != nil {
		return sandbox.Info{}, err
	}
	defer release()
	info, err := s.m.Create(ctx, spec)
	return s.preconnect(info, pullHint(spec.Image, err))
}

// pullHint adds to an unknown image's error how to get the image, as a
// registry-backed service would.
func pullHint(ref string, err error) error {
	if !bullpen.IsCode(err, bullpen.ENOTFOUND) || ref == "" || ref == image.BaseHost || !strings.Contains(bullpen.ErrorMessage(err), "image") {
		return err
	}
	return bullpen.Errorf(bullpen.ENOTFOUND, "%s: it is not on this server (GET /api/v1/images lists what is here). An admin can pull it first with POST /api/v1/images/pull {\"ref\":%q}, import it as a tarball, or let creates pull the images they name: Settings → Sandboxes, or PATCH /api/v1/settings/sandboxes {\"pull_on_create\":true}",
		bullpen.ErrorMessage(err), ref)
}

// preconnect has the Manager dial a new sandbox's init in the background
// while the create's answer goes back, so that its first command finds a
// checked control connection waiting (0.4–0.6 ms of a first exec here,
// A/B in sandbox.BenchmarkFirstExec).
func (s *Service) preconnect(in sandbox.Info, err error) (sandbox.Info, error) {
	if err != nil {
		return in, err
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.m.Preconnect(ctx, in.ID) // best effort: the exec dials if this failed
	}()
	return in, nil
}

// create creates a sandbox owned by actor (caller holds createMu, for all
// of the create: Ensure relies on that to find a workspace being made).
// The name goes into bullpen.SandboxNameTag, unique among actor's
// sandboxes only, so taking a name never tells whether someone else has a
// sandbox of that name.
func (s *Service) create(ctx context.Context, actor bullpen.Member, spec sandbox.Spec, extra map[string]string) (sandbox.Info, error) {
	spec, release, err := s.admit(ctx, actor, spec, extra)
	if err != nil {
		return sandbox.Info{}, err
	}
	defer release()
	return s.preconnect(s.m.Create(ctx, spec))
}

// Get returns a sandbox by id or name.
func (s *Service) Get(ctx context.Context, actor bullpen.Member, idOrName string) (sandbox.Info, error) {
	return s.lookup(ctx, actor, idOrName)
}

// List returns the live sandboxes the actor may see whose tags include all
// of tags, oldest first. Reserved tags cannot be filtered on.
func (s *Service) List(ctx context.Context, actor bullpen.Member, tags map[string]string) ([]sandbox.Info, error) {
	if err := checkTags(tags); err != nil {
		return nil, err
	}
	filter := make(map[string]string, len(tags)+1)
	for k, v := range tags {
		filter[k] = v
	}
	if !seesAll(actor) {
		filter[bullpen.SandboxOwnerTag] = strconv.FormatInt(actor.ID, 10)
	}
	return s.m.List(ctx, filter)
}

// Terminate ends a sandbox and removes everything of it.
func (s *Service) Terminate(ctx context.Context, actor bullpen.Member, id string) error {
	return s.act(ctx, actor, id, s.m.Terminate)
}

// Pause freezes a running sandbox; its memory is kept.
func (s *Service) Pause(ctx context.Context, actor bullpen.Member, id string) error {
	return s.act(ctx, actor, id, s.m.Pause)
}

// Resume thaws a paused sandbox.
func (s *Service) Resume(ctx context.Context, actor bullpen.Member, id string) error {
	return s.act(ctx, actor, id, s.m.Resume)
}

// Stop ends a sandbox's processes and keeps its files.
func (s *Service) Stop(ctx context.Context, actor bullpen.Member, id string) error {
	return s.act(ctx, actor, id, s.m.Stop)
}

// Start starts a stopped sandbox again.
func (s *Service) Start(ctx context.Context, actor bullpen.Member, id string) error {
	return s.act(ctx, actor, id, s.m.Start)
}

func (s *Service) act(ctx context.Context, actor bullpen.Member, id string, fn func(context.Context, string) error) error {
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return err
	}
	return fn(ctx, in.ID)
}

// Stats returns a sandbox's resource usage.
func (s *Service) Stats(ctx context.Context, actor bullpen.Member, id string) (sandbox.Usage, error) {
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return sandbox.Usage{}, err
	}
	return s.m.Stats(ctx, in.ID)
}

// Snapshot turns a sandbox's filesystem into a new image and returns its
// ID and the name a create names it by. A member's image is named "handle/name" and is private to
// that member (and admins) until an admin publishes it; an image of that
// name must not exist yet (ECONFLICT), so nobody can repoint a name
// others use.
func (s *Service) Snapshot(ctx context.Context, actor bullpen.Member, id, name string) (bullpen.ImageRef, error) {
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return bullpen.ImageRef{}, err
	}
	if s.images == nil {
		ref, err := s.m.Snapshot(ctx, in.ID, name)
		return bullpen.ImageRef{ID: ref, Name: name}, err
	}
	if name, err = snapshotName(actor, name); err != nil {
		return bullpen.ImageRef{}, err
	}
	if err := image.ValidateName(name); err != nil {
		return bullpen.ImageRef{}, err
	}
	if _, err := s.images.Get(ctx, name); err == nil {
		return bullpen.ImageRef{}, bullpen.Errorf(bullpen.ECONFLICT, "an image named %q exists already", name)
	} else if !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return bullpen.ImageRef{}, err
	}
	ref, err := s.m.Snapshot(ctx, in.ID, name)
	if err != nil {
		return bullpen.ImageRef{}, err
	}
	img, err := s.images.Get(ctx, name)
	if err == nil {
		err = s.owners.set(img.ID, imageOwner{Owner: actor.ID})
	}
	if err != nil {
		_ = s.images.Remove(ctx, name) // an image without its owner would be shared
		return bullpen.ImageRef{}, fmt.Errorf("sandboxes: snapshot: record owner: %w", err)
	}
	return bullpen.ImageRef{ID: ref, Name: name}, nil
}

// PublishPort publishes a port of the sandbox on a host loopback address.
func (s *Service) PublishPort(ctx context.Context, actor bullpen.Member, id string, port int) (sandbox.PortInfo, error) {
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return sandbox.PortInfo{}, err
	}
	return s.m.PublishPort(ctx, in.ID, port)
}

// ListPorts lists a sandbox's published ports.
func (s *Service) ListPorts(ctx context.Context, actor bullpen.Member, id string) ([]sandbox.PortInfo, error) {
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return nil, err
	}
	return s.m.ListPorts(ctx, in.ID)
}

// RevokePort stops publishing a port.
func (s *Service) RevokePort(ctx context.Context, actor bullpen.Member, id string, port int) error {
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return err
	}
	return s.m.RevokePort(ctx, in.ID, port)
}

// SetTimeout moves a sandbox's end to d from now (0: never), as E2B's
// set-timeout does.
func (s *Service) SetTimeout(ctx context.Context, actor bullpen.Member, id string, d time.Duration) error {
	return s.act(ctx, actor, id, func(ctx context.Context, id string) error { return s.m.SetTimeout(ctx, id, d) })
}
