package sandbox

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
)

// Manager runs sandboxes on this host. Its methods are safe for concurrent
// use.
type Manager struct {
	cfg     Config
	now     func() time.Time
	sbDir   string // StateDir/sandboxes
	baseDir string // StateDir/base/host: the host-tools skeleton
	imgDir  string // StateDir/images: fallback snapshot images
	tmpDir  string
	runDir  string // RunDir/<hash of StateDir>: rootfs mount points, sockets
	binds   []bindMount
	cg      *cgroups
	net     *network
	init    *initBinary

	mu     sync.Mutex
	sbs    map[string]*sandbox
	tombs  map[string]Info
	imgMu  sync.Mutex
	diskMu sync.Mutex // disk templates
	loopMu sync.Mutex // attaching loop devices (attachLoop)

	lookPath func(string) (string, error) // Config.lookPath (exec.LookPath)

	readyDir string        // StateDir/disk-ready: disks made ahead of time
	ready    chan string   // names of ready directories in readyDir
	refill   chan struct{} // wakes fillReady

	fdmDir    string        // the favordynmods hierarchy (cgrouplock.go); "" if none
	createSem chan struct{} // a slot per create provisioning (Config.MaxParallelCreates)
	pool      *initPool     // nil: Config.InitPool 0 (or runDir could not be shared)
	fs        *forkServer   // starts the inits (see forkserver.go)
	mnt       *mountNS      // where the sandboxes' mounts live (mountns.go)

	stop chan struct{}
	wg   sync.WaitGroup
}

// sandbox is one sandbox's in-memory state; mu serializes its lifecycle.
type sandbox struct {
	mu      sync.Mutex
	id      string
	meta    meta
	secrets []Secret
	dir     string
	rootfs  string
	sock    string
	proc    *initProc
	ports   map[int]*portProxy
	bridges []*bridgeProxy
	// spawnMu serializes the forks of commands (held from an exec request
	// until init reports the pid), so a KillTree exec's cgroup switch of
	// init's spawner thread catches only that command.
	spawnMu  sync.Mutex
	conns    initConns // idle control connections to init (initconns.go)
	inflight int
	lastAct  time.Time
	// creating is set while Create provisions the sandbox (holding mu for
	// all of it), so that List and the like skip it instead of waiting.
	creating atomic.Bool
}

// touch records activity (caller holds s.mu).
func (s *sandbox) touch(t time.Time) { s.lastAct = t }

// New opens (creating if needed) the state directory and returns a Manager.
// Sandboxes left by a previous process are re-adopted (live ones keep
// running, stopped ones stay stopped) or, with OnRestart = RestartReap,
// terminated. It needs root.
func New(ctx context.Context, cfg Config) (*Manager, error) {
	if os.Geteuid() != 0 {
		return nil, bullpen.Errorf(bullpen.EUNSUPPORTED, "the local sandbox runtime needs root")
	}
	if cfg.StateDir == "" || !filepath.IsAbs(cfg.StateDir) {
		return nil, bullpen.Errorf(bullpen.EINVALID, "Config.StateDir must be an absolute path")
	}
	cfg.StateDir = filepath.Clean(cfg.StateDir)
	if cfg.RunDir == "" {
		cfg.RunDir = "/run/bullpen-sandbox"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NetworkCIDR == "" {
		cfg.NetworkCIDR = "10.231.0.0/16"
	}
	if cfg.IDMapBase == 0 {
		cfg.IDMapBase = 100000
	}
	if cfg.CgroupParent == "" {
		cfg.CgroupParent = "bullpen-sandbox"
	}
	if cfg.lookPath == nil {
		cfg.lookPath = exec.LookPath
	}
	if err := setLimitDefaults(&cfg); err != nil {
		return nil, err
	}
	if cfg.RunOutputLimit == 0 {
		cfg.RunOutputLimit = 16 << 20
	}
	if cfg.MaxParallelCreates <= 0 {
		cfg.MaxParallelCreates = 2 * runtime.GOMAXPROCS(0)
	}
	if cfg.CheckInterval == 0 {
		cfg.CheckInterval = time.Second
	}
	if cfg.OnRestart == "" {
		cfg.OnRestart = RestartAdopt
	}
	if cfg.OnRestart != RestartAdopt && cfg.OnRestart != RestartReap {
		return nil, bullpen.Errorf(bullpen.EINVALID, "Config.OnRestart must be %q or %q", RestartAdopt, RestartReap)
	}
	poolN, err := poolSize(&cfg)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(cfg.StateDir))
	m := &Manager{
		cfg: cfg, now: cfg.Now,
		sbDir:   filepath.Join(cfg.StateDir, "sandboxes"),
		baseDir: filepath.Join(cfg.StateDir, "base", "host"),
		imgDir:  filepath.Join(cfg.StateDir, "images"),
		tmpDir:  filepath.Join(cfg.StateDir, "tmp"),
		runDir:  filepath.Join(cfg.RunDir, hex.EncodeToString(sum[:6])),
		sbs:     map[string]*sandbox{}, tombs: map[string]Info{},
		stop: make(chan struct{}), lookPath: cfg.lookPath,
		readyDir: filepath.Join(cfg.StateDir, "disk-ready"),
		ready:    make(chan string, readyDisks), refill: make(chan struct{}, 1),
		createSem: make(chan struct{}, cfg.MaxParallelCreates),
	}
	if len(m.runDir)+len("/sb_0123456789abcdef.sock") > 100 {
		return nil, bullpen.Errorf(bullpen.EINVALID, "Config.RunDir is too long for unix socket paths")
	}
	if m.init, err = findInit(ctx, cfg.InitPath); err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			if m.fs != nil {
				m.fs.close()
			}
			m.init.close()
			if m.mnt != nil {
				_ = m.mnt.do(func() error { return unfavorDynMods(m.fdmDir) })
				m.closeMountNS()
			}
		}
	}()
	for _, d := range []string{cfg.StateDir, m.sbDir, m.readyDir, filepath.Dir(m.baseDir), m.imgDir, m.tmpDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: state dir: %w", err)
		}
	}
	// Mount points must be traversable by the sandboxes' (unprivileged on
	// the host) root; each sandbox's own directory is owned by it.
	for _, d := range []string{cfg.RunDir, m.runDir} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			return nil, fmt.Errorf("sandbox: run dir: %w", err)
		}
		if err := os.Chmod(d, 0o711); err != nil {
			return nil, fmt.Errorf("sandbox: run dir: %w", err)
		}
	}
	// Each sandbox is a directory tree of its own in these.
	for _, d := range []string{m.sbDir, m.readyDir, m.tmpDir, m.runDir} {
		if err := spreadChildren(d); err != nil {
			return nil, err
		}
	}
	var fresh bool
	if m.mnt, fresh, err = openMountNS(m.runDir); err != nil {
		return nil, err
	}
	if fresh {
		m.moveHostMounts()
	}
	m.fs = newForkServer(m.init.execPath(), m.mnt.do)
	if m.cg, err = detectCgroups(cfg.CgroupParent); err != nil {
		return nil, err
	}
	m.cg.defaultCPU = cfg.DefaultCPU
	if !cfg.DefaultCgroupLock {
		// Best effort: without it sandboxes start as before, only slower.
		_ = m.mnt.do(func() error { // beside runDir, which holds sandboxes only
			m.fdmDir, _ = favorDynMods(m.runDir + ".cgroup-lock")
			return nil
		})
	}
	if m.net, err = newNetwork(cfg.NetworkCIDR, cfg.RouterNetNS); err != nil {
		return nil, err
	}
	m.binds = hostBinds()
	if err := buildSkeleton(m.baseDir, cfg.IDMapBase, m.binds); err != nil {
		return nil, fmt.Errorf("sandbox: host base: %w", err)
	}
	if err := m.mnt.do(func() error {
		m.clearReady()
		return m.restore(ctx)
	}); err != nil {
		return nil, err
	}
	if err := m.startPool(poolN); err != nil {
		return nil, err
	}
	started = true
	m.wg.Add(1)
	go m.loop()
	if !cfg.DiskQuotaOff {
		m.wg.Add(1)
		go m.fillReady()
	}
	return m, nil
}

// Close stops the Manager's background work and port proxies. Running
// sandboxes keep running (their inits do not depend on this process) and a
// later New with the same StateDir re-adopts them; call TerminateAll first
// to end them instead. Published ports stop forwarding until then.
func (m *Manager) Close() error {
	select {
	case <-m.stop:
		return nil
	default:
	}
	close(m.stop)
	m.wg.Wait()
	m.closePool()
	m.fs.close()
	_ = m.mnt.do(func() error { m.clearReady(); return nil })
	m.mu.Lock()
	sbs := make([]*sandbox, 0, len(m.sbs))
	for _, s := range m.sbs {
		sbs = append(sbs, s)
	}
	m.mu.Unlock()
	for _, s := range sbs {
		s.mu.Lock()
		for _, p := range s.ports {
			p.close()
		}
		if s.proc != nil {
			s.proc.release()
		}
		s.mu.Unlock()
	}
	err := m.mnt.do(func() error {
		err := unfavorDynMods(m.fdmDir)
		m.unshareRunDir() // also one a killed process with a pool left
		return err
	})
	m.closeMountNS()
	os.Remove(m.runDir) // only if empty: no sandbox left behind
	return err
}

// Defaults reports the limits a sandbox gets when its Spec leaves them
// at 0: Config.DefaultCPU (cores) and Config.DefaultMemoryBytes, as the
// Manager applies them (the library's defaults when the Config set none).
func (m *Manager) Defaults() (cpu float64, memoryBytes int64) {
	return m.cfg.DefaultCPU, m.cfg.DefaultMemoryBytes
}

// InitPath reports the init binary the Manager starts sandboxes with: the
// dedicated one (Config.InitPath or InitBinaryName next to the executable),
// or "/proc/self/exe" when it re-executes its own binary.
func (m *Manager) InitPath() string {
	if m.init.path == "" {
		return "/proc/self/exe"
	}
	return m.init.path
}

// TerminateAll terminates every sandbox of this Manager.
func (m *Manager) TerminateAll(ctx context.Context) error {
	var errs []string
	for _, info := range m.all() {
		if err := m.Terminate(ctx, info.ID); err != nil && !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("sandbox: terminate all: %s", strings.Join(errs, "; "))
	}
	return nil
}

func newID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "sb_" + hex.EncodeToString(b[:])
}

// lookup finds a live sandbox by id or name.
func (m *Manager) lookup(idOrName string) (*sandbox, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.sbs[idOrName]; ok {
		return s, nil
	}
	for _, s := range m.sbs {
		if s.meta.Name != "" && s.meta.Name == idOrName {
			return s, nil
		}
	}
	return nil, bullpen.Errorf(bullpen.ENOTFOUND, "sandbox %q not found", idOrName)
}

// Get returns a sandbox by id or name. Terminated sandboxes are found by id
// for as long as this Manager lives.
func (m *Manager) Get(ctx context.Context, idOrName string) (Info, error) {
	s, err := m.lookup(idOrName)
	if err != nil {
		m.mu.Lock()
		t, ok := m.tombs[idOrName]
		m.mu.Unlock()
		if ok {
			return t, nil
		}
		return Info{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info(), nil
}

// List returns the live (not terminated) sandboxes whose tags include all
// of tags, oldest first.
func (m *Manager) List(ctx context.Context, tags map[string]string) ([]Info, error) {
	var out []Info
	for _, in := range m.all() {
		match := true
		for k, v := range tags {
			if in.Tags[k] != v {
				match = false
				break
			}
		}
		if match {
			out = append(out, in)
		}
	}
	return out, nil
}

func (m *Manager) all() []Info {
	m.mu.Lock()
	sbs := make([]*sandbox, 0, len(m.sbs))
	for _, s := range m.sbs {
		sbs = append(sbs, s)
	}
	m.mu.Unlock()
	out := make([]Info, 0, len(sbs))
	for _, s := range sbs {
		if s.creating.Load() {
			continue // not listed yet; its lock is held until it runs
		}
		s.mu.Lock()
		if s.meta.State != StateTerminated && s.meta.State != stateCreating {
			out = append(out, s.info())
		}
		s.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// info converts the sandbox's metadata to an Info (caller holds s.mu).
func (s *sandbox) info() Info {
	md := &s.meta
	in := Info{ID: md.ID, Name: md.Name, Tags: copyMap(md.Tags), Image: md.Image, State: md.State,
		Workdir: md.Workdir, CPU: md.CPU, MemoryBytes: md.MemoryBytes, Pids: md.Pids, DiskBytes: md.DiskBytes,
		Inodes: md.Inodes, NoFile: md.NoFile, DiskUnbounded: md.DiskBytes == 0,
		Env: copyMap(md.Env), SecretNames: append([]string(nil), md.SecretNames...), Timeout: md.Timeout,
		IdleTimeout: md.IdleTimeout, IdleAction: md.IdleAction, Network: md.Network,
		AllowedCIDRs: append([]string(nil), md.Allowed...), CreatedAt: md.CreatedAt, StartedAt: md.StartedAt,
		ExpiresAt: md.ExpiresAt, LastActivity: s.lastAct,
		Mounts: append([]Mount(nil), md.Mounts...), Bridges: append([]Bridge(nil), md.Bridges...)}
	for _, p := range sortedPorts(s.ports) {
		in.Ports = append(in.Ports, PortInfo{Port: p.port, HostAddr: p.addr})
	}
	return in
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (m *Manager) emit(typ EventType, id, detail string) {
	if m.cfg.OnEvent != nil {
		m.cfg.OnEvent(Event{Type: typ, SandboxID: id, Time: m.now(), Detail: detail})
	}
}

// saveMeta persists the sandbox's metadata (caller holds s.mu).
func (s *sandbox) saveMeta() error {
	b, err := json.MarshalIndent(&s.meta, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(s.dir, "meta.json"), b)
}

// saveSecrets writes secrets.json; none when the sandbox has no secrets
// (a missing file reads as none), one file less to make per create.
func (s *sandbox) saveSecrets() error {
	if len(s.secrets) == 0 {
		return nil
	}
	b, err := json.Marshal(s.secrets)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(s.dir, "secrets.json"), b)
}

func writeFileAtomic(p string, b []byte) error {
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("sandbox: write %s: %w", filepath.Base(p), err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("sandbox: write %s: %w", filepath.Base(p), err)
	}
	return nil
}

// loop enforces timeouts and idle timeouts.
func (m *Manager) loop() {
	defer m.wg.Done()
	t := time.NewTicker(m.cfg.CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.checkTimeouts()
		}
	}
}

func (m *Manager) checkTimeouts() {
	now := m.now()
	m.mu.Lock()
	sbs := make([]*sandbox, 0, len(m.sbs))
	for _, s := range m.sbs {
		sbs = append(sbs, s)
	}
	m.mu.Unlock()
	ctx := context.Background()
	for _, s := range sbs {
		s.mu.Lock()
		md := s.meta
		expired := !md.ExpiresAt.IsZero() && now.After(md.ExpiresAt)
		// Pausing does not stop the idle clock, and a command frozen by the
		// pause is no activity: a paused sandbox idles out like a running
		// one (into stopped or terminated; IdlePause has nothing more to do).
		idle := md.IdleTimeout > 0 && now.Sub(s.lastAct) > md.IdleTimeout &&
			((md.State == StateRunning && s.inflight == 0) || (md.State == StatePaused && md.IdleAction != IdlePause))
		s.mu.Unlock()
		switch {
		case md.State == StateTerminated || md.State == stateCreating:
		case expired:
			m.emit(EventTimedOut, md.ID, "timeout")
			_ = m.Terminate(ctx, md.ID)
		case idle:
			m.emit(EventTimedOut, md.ID, "idle")
			switch md.IdleAction {
			case IdlePause:
				_ = m.Pause(ctx, md.ID)
			case IdleTerminate:
				_ = m.Terminate(ctx, md.ID)
			default:
				_ = m.Stop(ctx, md.ID)
			}
		}
	}
}
