package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
	"golang.org/x/sys/unix"
)

// stateCreating marks a sandbox being provisioned; a restart reaps it.
const stateCreating State = "creating"

// meta is a sandbox's persisted metadata (meta.json, mode 0600). Secret
// values live in secrets.json (0600) so that Start can inject them again.
type meta struct {
	ID          string              `json:"id"`
	Name        string              `json:"name,omitempty"`
	Tags        map[string]string   `json:"tags,omitempty"`
	Image       string              `json:"image"`
	Layers      []string            `json:"layers"` // overlay lowers, lowest first
	HostBase    bool                `json:"host_base"`
	ImageEnv    []string            `json:"image_env,omitempty"`
	Workdir     string              `json:"workdir"`
	CPU         float64             `json:"cpu"`
	MemoryBytes int64               `json:"memory_bytes"`
	Pids        int64               `json:"pids"`
	DiskBytes   int64               `json:"disk_bytes"`
	Inodes      int64               `json:"inodes,omitempty"`
	NoFile      int64               `json:"nofile,omitempty"` // 0 (older metadata): Config.DefaultNoFile
	Env         map[string]string   `json:"env,omitempty"`
	SecretNames []string            `json:"secret_names,omitempty"`
	SecretFiles []string            `json:"secret_files,omitempty"`
	Timeout     time.Duration       `json:"timeout"`
	IdleTimeout time.Duration       `json:"idle_timeout"`
	IdleAction  IdleAction          `json:"idle_action"`
	Network     NetworkPolicy       `json:"network"`
	Allowed     []string            `json:"allowed,omitempty"`
	Hosts       map[string][]string `json:"hosts,omitempty"`
	NetIndex    int                 `json:"net_index"` // -1: no network
	Ports       []PortInfo          `json:"ports,omitempty"`
	Mounts      []Mount             `json:"mounts,omitempty"`
	Bridges     []Bridge            `json:"bridges,omitempty"`
	State       State               `json:"state"`
	CreatedAt   time.Time           `json:"created_at"`
	StartedAt   time.Time           `json:"started_at"`
	ExpiresAt   time.Time           `json:"expires_at"`
	InitPid     int                 `json:"init_pid"`
	InitStart   uint64              `json:"init_start"` // /proc/pid/stat starttime
	IDMapBase   uint32              `json:"id_map_base"`
	Upper       string              `json:"upper"`
	Work        string              `json:"work"`
}

// Create provisions and starts a sandbox. On any error everything it made
// is removed again.
func (m *Manager) Create(ctx context.Context, spec Spec) (Info, error) {
	sp, err := m.normalize(spec)
	if err != nil {
		return Info{}, err
	}
	layers, hostBase, imgEnv, workdir, err := m.resolveImage(ctx, sp.Image)
	if err != nil {
		return Info{}, err
	}
	allowed, hosts, err := m.resolveNetwork(ctx, sp.Network)
	if err != nil {
		return Info{}, err
	}
	if sp.Workdir == "" {
		sp.Workdir = workdir
	}
	now := m.now()
	// A pre-started init brings its id (its cgroups and socket are named
	// after it); Create owns it from here and discards it unless it
	// assigns it.
	pe := m.takePooled()
	id := newID()
	if m.pool != nil {
		// Any create, pooled or not (a burst emptied the pool), holds
		// the refill off until creates pause.
		defer m.refillPool()
	}
	if pe != nil {
		id = pe.id
		defer func() {
			if pe != nil {
				m.discardPooled(pe)
			}
		}()
	}
	s := &sandbox{id: id, dir: filepath.Join(m.sbDir, id), rootfs: filepath.Join(m.runDir, id),
		sock: filepath.Join(m.runDir, id+".sock"), ports: map[int]*portProxy{}, lastAct: now,
		secrets: append([]Secret(nil), sp.Secrets...)}
	s.meta = meta{ID: id, Name: sp.Name, Tags: copyMap(sp.Tags), Image: sp.Image, Layers: layers,
		HostBase: hostBase, ImageEnv: imgEnv, Workdir: sp.Workdir, CPU: sp.CPU, MemoryBytes: sp.MemoryBytes,
		Pids: sp.Pids, NoFile: sp.NoFile, DiskBytes: sp.DiskBytes, Inodes: sp.Inodes, Env: copyMap(sp.Env), Timeout: sp.Timeout,
		IdleTimeout: sp.IdleTimeout, IdleAction: sp.IdleAction, Network: sp.Network, Allowed: allowed,
		Hosts: hosts, NetIndex: -1, State: stateCreating, CreatedAt: now, IDMapBase: m.cfg.IDMapBase,
		Mounts: append([]Mount(nil), sp.Mounts...), Bridges: append([]Bridge(nil), sp.Bridges...)}
	for _, sec := range sp.Secrets {
		s.meta.SecretNames = append(s.meta.SecretNames, sec.Name)
		if sec.File != "" {
			s.meta.SecretFiles = append(s.meta.SecretFiles, filepath.Clean(sec.File))
		}
	}
	if sp.Timeout > 0 {
		s.meta.ExpiresAt = now.Add(sp.Timeout)
	}
	s.creating.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.creating.Store(false)
	m.mu.Lock()
	if sp.Name != "" {
		for _, o := range m.sbs {
			if o.meta.Name == sp.Name {
				m.mu.Unlock()
				return Info{}, bullpen.Errorf(bullpen.ECONFLICT, "a sandbox named %q exists", sp.Name)
			}
		}
	}
	m.sbs[id] = s
	m.mu.Unlock()
	// Provisioning is CPU and kernel work: a burst gains nothing from
	// running it all at once (each create would finish only when all do),
	// so at most Config.MaxParallelCreates run, the rest wait their turn.
	select {
	case m.createSem <- struct{}{}:
		defer func() { <-m.createSem }()
	case <-ctx.Done():
		m.mu.Lock()
		delete(m.sbs, id)
		m.mu.Unlock()
		return Info{}, fmt.Errorf("sandbox: create: %w", ctx.Err())
	}

	// The cgroups do not depend on the filesystem: make them meanwhile.
	// A pooled init's have the default limits: most creates keep them.
	cgErr := make(chan error, 1)
	if pe != nil && pe.sameLimits(sp.CPU, sp.MemoryBytes, sp.Pids, m.cfg.DefaultCPU) {
		cgErr <- nil
	} else {
		go func(cpu float64, mem, pids int64) { cgErr <- m.cg.create(id, cpu, mem, pids) }(sp.CPU, sp.MemoryBytes, sp.Pids)
	}
	err = m.mnt.do(func() error { return m.provision(s) })
	if cerr := <-cgErr; err == nil {
		err = cerr
	}
	if err == nil && pe != nil {
		e := pe
		pe = nil // assignLocked kills it on error, destroyLocked removes the rest
		if err = m.assignLocked(ctx, s, e); errors.Is(err, errPooledDead) {
			err = m.startLocked(ctx, s, true) // its cgroups have the limits
		}
	} else if err == nil {
		err = m.startLocked(ctx, s, true)
	}
	if err == nil {
		for _, p := range sp.Ports {
			if _, err = m.publishLocked(s, p, ""); err != nil {
				break
			}
		}
	}
	if err == nil {
		s.meta.State = StateRunning
		err = s.saveMeta()
	}
	if err != nil {
		if derr := m.destroyLocked(s); derr != nil {
			err = errors.Join(err, derr)
		}
		m.mu.Lock()
		delete(m.sbs, id)
		m.mu.Unlock()
		return Info{}, err
	}
	m.emit(EventCreated, id, "")
	m.emit(EventStarted, id, "")
	return s.info(), nil
}

// resolveImage returns the overlay lowers (lowest first) of ref.
func (m *Manager) resolveImage(ctx context.Context, ref string) (layers []string, hostBase bool, env []string, workdir string, err error) {
	if ref == "host" {
		return []string{m.baseDir}, true, nil, "/home/sandbox", nil
	}
	if img, ok := m.localImage(ref); ok {
		return append([]string{m.baseDir}, img.Layers...), true, img.Env, img.Workdir, nil
	}
	if m.cfg.Images == nil {
		return nil, false, nil, "", bullpen.Errorf(bullpen.ENOTFOUND, "unknown image %q", ref)
	}
	layers, env, workdir, err = m.cfg.Images.Resolve(ctx, ref)
	if err != nil {
		var be *bullpen.Error
		if errors.As(err, &be) {
			return nil, false, nil, "", err
		}
		return nil, false, nil, "", &bullpen.Error{Code: bullpen.ENOTFOUND, Message: fmt.Sprintf("unknown image %q", ref), Err: err}
	}
	if len(layers) == 0 {
		return nil, false, nil, "", bullpen.Errorf(bullpen.EINVALID, "image %q has no layers", ref)
	}
	if b, ok := m.cfg.Images.(interface {
		Base(ctx context.Context, ref string) (string, error)
	}); ok {
		if base, err := b.Base(ctx, ref); err == nil && base == "host" {
			hostBase = true
			layers = append([]string{m.baseDir}, layers...)
		}
	}
	if workdir == "" {
		workdir = "/"
		if hostBase {
			workdir = "/home/sandbox"
		}
	}
	return layers, hostBase, env, workdir, nil
}

// provision makes the sandbox's directories, disk and root filesystem.
func (m *Manager) provision(s *sandbox) error {
	base := int(m.cfg.IDMapBase)
	md := &s.meta
	ready := md.DiskBytes == m.cfg.DefaultDiskBytes && md.Inodes == m.defaultInodes(md.DiskBytes) && m.takeReadyDisk(s.dir)
	if !ready {
		if err := os.Mkdir(s.dir, 0o700); err != nil {
			return fmt.Errorf("sandbox: create dir: %w", err)
		}
	}
	if err := s.saveMeta(); err != nil {
		return err
	}
	if err := s.saveSecrets(); err != nil {
		return err
	}
	layerDir := s.dir
	if md.DiskBytes > 0 {
		layerDir = filepath.Join(s.dir, "disk")
	}
	if md.DiskBytes > 0 && !ready {
		img := filepath.Join(s.dir, "disk.img")
		if err := m.newDisk(img, s.meta.DiskBytes, s.meta.Inodes); err != nil {
			return err
		}
		if err := m.mountNewDisk(img, layerDir); err != nil {
			return err
		}
	}
	s.meta.Upper, s.meta.Work = filepath.Join(layerDir, "upper"), filepath.Join(layerDir, "work")
	if !ready { // a ready disk has them
		if err := makeLayerDirs(layerDir, base); err != nil {
			return err
		}
	}
	// Nothing of this new sandbox is mounted yet: skip reading the host's
	// mount table (long with hundreds of sandboxes).
	if err := m.mountOverlayAt(s, false); err != nil {
		return err
	}
	return m.prepareRootfs(s)
}

// makeLayerDirs makes the overlay's upper (owned by the sandbox's root,
// host uid base) and work directories in dir.
func makeLayerDirs(dir string, base int) error {
	upper := filepath.Join(dir, "upper")
	if err := os.Mkdir(upper, 0o755); err != nil {
		return fmt.Errorf("sandbox: upper dir: %w", err)
	}
	if err := os.Chown(upper, base, base); err != nil {
		return fmt.Errorf("sandbox: upper dir: %w", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "work"), 0o700); err != nil {
		return fmt.Errorf("sandbox: work dir: %w", err)
	}
	return nil
}

// mountRootfs (re)mounts the sandbox's overlay at its mount point.
func (m *Manager) mountRootfs(s *sandbox) error {
	if s.meta.DiskBytes > 0 {
		if err := m.mountDisk(filepath.Join(s.dir, "disk.img"), filepath.Join(s.dir, "disk")); err != nil {
			return err
		}
	}
	return m.mountOverlayAt(s, true)
}

// mountOverlayAt mounts the sandbox's overlay at its mount point; with
// check, not if it is mounted already.
func (m *Manager) mountOverlayAt(s *sandbox, check bool) error {
	base := int(s.meta.IDMapBase)
	if err := os.Mkdir(s.rootfs, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("sandbox: mount point: %w", err)
	}
	if err := os.Chown(s.rootfs, base, base); err != nil {
		return fmt.Errorf("sandbox: mount point: %w", err)
	}
	if check && isMounted(s.rootfs) {
		return nil
	}
	return mountOverlay(s.meta.Layers, s.meta.Upper, s.meta.Work, s.rootfs)
}

// prepareRootfs writes per-sandbox files (hosts, hostname, secret files),
// the mount points init needs, and binds Spec.Mounts.
func (m *Manager) prepareRootfs(s *sandbox) error {
	base := int(s.meta.IDMapBase)
	sys, err := openRoot(s.rootfs, base)
	if err != nil {
		return err
	}
	defer sys.Close()
	for _, d := range []struct {
		p    string
		mode uint32
		uid  int
	}{{"/proc", 0o555, base}, {"/dev", 0o755, base}, {"/etc", 0o755, base}, {"/tmp", 0o1777, base},
		{"/home", 0o755, base}, {"/home/sandbox", 0o755, base + sandboxUID}} {
		if err := sys.ensureDir(d.p, d.mode, d.uid); err != nil {
			return err
		}
	}
	if err := prepareMounts(sys, s.meta.Mounts); err != nil {
		return err
	}
	var hosts strings.Builder
	hosts.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t" + s.hostname() + "\n")
	names := make([]string, 0, len(s.meta.Hosts))
	for d := range s.meta.Hosts {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		for _, ip := range s.meta.Hosts[d] {
			fmt.Fprintf(&hosts, "%s\t%s\n", ip, d)
		}
	}
	if err := sys.writeFile("/etc/hosts", strings.NewReader(hosts.String()), 0o644); err != nil {
		return err
	}
	if err := sys.writeFile("/etc/hostname", strings.NewReader(s.hostname()+"\n"), 0o644); err != nil {
		return err
	}
	user, err := openRoot(s.rootfs, base+sandboxUID)
	if err != nil {
		return err
	}
	defer user.Close()
	for _, sec := range s.secrets {
		if sec.File == "" {
			continue
		}
		p := filepath.Clean(sec.File)
		if err := user.mkdir(filepath.Dir(p), true, 0o755); err != nil {
			return err
		}
		if err := user.writeFile(p, strings.NewReader(sec.Value), 0o400); err != nil {
			return err
		}
	}
	return bindMounts(s.rootfs, s.meta.Mounts)
}

func (s *sandbox) hostname() string {
	if s.meta.Name != "" {
		return s.meta.Name
	}
	return strings.ReplaceAll(s.id, "_", "-")
}

// ensureDir makes directory p (mode, owner uid) unless it exists.
func (r *fsRoot) ensureDir(p string, mode uint32, uid int) error {
	if fi, err := r.stat(p); err == nil {
		if !fi.IsDir {
			return bullpen.Errorf(bullpen.EINVALID, "image path %s is not a directory", p)
		}
		return nil
	}
	dfd, name, err := r.parent(p)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if err := unix.Mkdirat(dfd, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return fileErr("mkdir "+p, err)
	}
	if err := unix.Fchownat(dfd, name, uid, uid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fileErr("chown "+p, err)
	}
	return fileErr("chmod "+p, unix.Fchmodat(dfd, name, mode, 0))
}

// localImage is a snapshot image kept under StateDir/images when no
// ImageSource is configured.
type localImage struct {
	Name    string   `json:"name"`
	Base    string   `json:"base"`
	Layers  []string `json:"layers"` // above the host base, lowest first
	Env     []string `json:"env,omitempty"`
	Workdir string   `json:"workdir"`
}

func (m *Manager) localImage(name string) (*localImage, bool) {
	if !nameRe.MatchString(name) {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(m.imgDir, name, "image.json"))
	if err != nil {
		return nil, false
	}
	var img localImage
	if json.Unmarshal(b, &img) != nil {
		return nil, false
	}
	return &img, true
}
