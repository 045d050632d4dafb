// Package sbinit is the inside of a sandbox: the PID 1 that package sandbox
// starts in each sandbox's namespaces. It mounts the sandbox's root
// filesystem, pivots into it and then runs commands for the host over a
// unix socket.
//
// It is kept small on purpose, because every sandbox runs a copy: it
// imports only a little of the standard library and golang.org/x/sys/unix
// (no net, os/signal, encoding/json, fmt or reflect, no seccomp assembler:
// the host hands init a ready-made BPF program), runs on few OS threads
// (no signal-handling thread; GOMAXPROCS=1) and returns its free heap to
// the kernel once it is idle.
//
// The dedicated binary cmd/bullpen-sandbox-init is just Main; a host binary
// that wants to double as its own init (the fallback when no dedicated
// binary is installed) calls sandbox.MaybeRunInit, which calls MaybeRun.
package sbinit

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Version is the version of the Config and wire protocol. The host checks
// that the init binary it runs speaks the same one.
const Version = 4

// Environment variables the host sets.
const (
	// EnvConfig marks the process as a sandbox init; its value is the JSON
	// Config.
	EnvConfig = "BULLPEN_SANDBOX_INIT"
	// EnvProbe makes the init binary print "bullpen-sandbox-init <Version>"
	// and exit, so the host can check it before using it.
	EnvProbe = "BULLPEN_SANDBOX_INIT_PROBE"
)

// Fds passed to init by the host.
const (
	// ListenFd is a bound unix stream socket for exec requests. Init calls
	// listen() on it, so that the kernel reports init, not the host, as
	// the peer of every connection the host makes (SO_PEERCRED).
	ListenFd = 3
	// StatusFd is a pipe on which init writes "tid <spawner tid>" (the
	// host then moves that thread into the commands' cgroup), then "ok"
	// or "error: ..." at any point, then closes it.
	StatusFd = 4
	// GoFd is a pipe from which init reads one byte, "g", once the host
	// has moved the spawner thread: only then does the spawner enter its
	// own cgroup namespace, rooted at the commands' cgroup. A pooled init
	// (Config.Stage set) reads its assignment line from it instead (see
	// Assignment); EOF before that makes it exit at once.
	GoFd = 5
)

// ProcName is the name (comm) init gives its main thread, so that it shows
// up as such in ps whatever path it was executed from.
const ProcName = "bullpen-sbinit"

// Bind is a read-only bind of a host path into the root filesystem.
type Bind struct {
	Src string `json:"src"`
	Dst string `json:"dst"`
}

// Config is what the host tells init about the sandbox to build.
type Config struct {
	Version int `json:"version"`
	// Rootfs is the sandbox's root filesystem; for a pooled init, the
	// directory the sandboxes' root filesystems will be mounted in.
	Rootfs   string `json:"rootfs"`
	Hostname string `json:"hostname"`
	Binds    []Bind `json:"binds,omitempty"`
	UID      int    `json:"uid"`
	GID      int    `json:"gid"`
	// Seccomp is the commands' seccomp filter: classic BPF instructions
	// (struct sock_filter, 8 bytes each, native byte order). Required.
	Seccomp []byte `json:"seccomp"`
	// Key is a secret of this init's life, which it sends first on every
	// connection it accepts: the host sends a request only to a peer that
	// knows it, so that even a process holding a leaked listener fd could
	// not receive one. Required.
	Key string `json:"key"`
	// Stage, when set, makes this a pooled init, started before its
	// sandbox exists: it builds a staging root on a tmpfs mounted at
	// Stage, holding only what an assignment needs (Rootfs, the Binds'
	// sources, a few /dev nodes, /proc), pivots into it, reports "pooled" and
	// waits for its assignment on GoFd.
	Stage string `json:"stage,omitempty"`
}

// EncodeFilter packs BPF instructions as Config.Seccomp expects them.
func EncodeFilter(insts []unix.SockFilter) []byte {
	b := make([]byte, 8*len(insts))
	for i, in := range insts {
		*(*unix.SockFilter)(unsafe.Pointer(&b[8*i])) = in
	}
	return b
}

func decodeFilter(b []byte) ([]unix.SockFilter, error) {
	if len(b) == 0 || len(b)%8 != 0 || len(b)/8 > 4096 {
		return nil, errors.New("config has no valid seccomp filter")
	}
	out := make([]unix.SockFilter, len(b)/8)
	for i := range out {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[i])), 8), b[8*i:8*i+8])
	}
	return out, nil
}

// Main is the whole of the dedicated init binary.
func Main() {
	MaybeRun()
	os.Stderr.WriteString("bullpen-sandbox-init: this is the sandbox init; the sandbox Manager starts it\n")
	os.Exit(2)
}

// MaybeRun turns the process into a sandbox init if the host started it as
// one (EnvConfig set) or into its fork-server (EnvForkServer set), or
// answers a version probe; in these cases it never returns. Otherwise it returns at once.
func MaybeRun() {
	if _, ok := os.LookupEnv(EnvProbe); ok {
		os.Stdout.WriteString("bullpen-sandbox-init " + strconv.Itoa(Version) + "\n")
		os.Exit(0)
	}
	if _, ok := os.LookupEnv(EnvForkServer); ok {
		runForkServer()
	}
	v, ok := os.LookupEnv(EnvConfig)
	if !ok {
		return
	}
	setName(ProcName) // first: still on the main thread, whose name is the process's
	sealFds()
	status := os.NewFile(StatusFd, "status")
	err := run(v, status)
	status.WriteString("error: " + err.Error() + "\n")
	os.Exit(1)
}

// run sets the sandbox up, reports readiness and serves exec requests until
// the sandbox is killed. It returns only on a setup error.
func run(raw string, status *os.File) error {
	var cfg Config
	if err := decodeConfig([]byte(raw), &cfg); err != nil {
		return errors.New("decode config: " + err.Error())
	}
	raw = ""
	os.Clearenv()
	if cfg.Version != Version {
		return errors.New("init speaks config version " + strconv.Itoa(Version) + ", the host " +
			strconv.Itoa(cfg.Version) + ": rebuild bullpen-sandbox-init together with the server")
	}
	filter, err := decodeFilter(cfg.Seccomp)
	if err != nil {
		return err
	}
	if len(cfg.Key) < 32 {
		return errors.New("config has no key")
	}
	srv := newServer(cfg.UID, cfg.GID)
	srv.hostUID, srv.hostGID = overflowIDs()
	srv.key = cfg.Key
	// The host moves the spawner thread (whose children are the commands)
	// into the sandbox's "user" cgroup while init builds the sandbox.
	tid, confine := srv.startSpawner(filter)
	if _, err := status.WriteString("tid " + strconv.Itoa(tid) + "\n"); err != nil {
		return err
	}
	if cfg.Stage != "" {
		err = runPooled(&cfg, status)
	} else {
		err = runCold(&cfg)
	}
	if err != nil {
		return err
	}
	if err := confine(); err != nil {
		return err
	}
	if _, err := status.WriteString("ok\n"); err != nil {
		return err
	}
	status.Close()
	cfg, filter = Config{}, nil
	// Setup garbage goes back to the kernel once init is idle, not now:
	// the first exec usually follows at once.
	srv.end()
	return srv.serve(os.NewFile(ListenFd, "listener"))
}

// runCold builds the sandbox while the host moves init into its cgroups,
// then waits for the host's go-ahead.
func runCold(cfg *Config) error {
	if err := setup(cfg); err != nil {
		return err
	}
	return awaitGo(os.NewFile(GoFd, "go"))
}

// setup builds the sandbox from the inside: root filesystem, hostname,
// loopback, and the control socket's listen.
func setup(cfg *Config) error {
	if err := setupRootfs(cfg); err != nil {
		return err
	}
	if err := unix.Sethostname([]byte(cfg.Hostname)); err != nil {
		return wrap("sethostname", err)
	}
	if err := loopbackUp(); err != nil {
		return wrap("loopback up", err)
	}
	// Keep sandbox processes (other uids anyway) out of init's /proc.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return wrap("set non-dumpable", err)
	}
	if err := unix.Listen(ListenFd, 1024); err != nil {
		return wrap("listen", err)
	}
	if err := unix.SetNonblock(ListenFd, true); err != nil {
		return wrap("listener", err)
	}
	return nil
}

// awaitGo waits for the host's go-ahead byte on f and closes f.
func awaitGo(f *os.File) error {
	defer f.Close()
	var b [1]byte
	if n, err := f.Read(b[:]); n != 1 || b[0] != 'g' {
		return wrap("wait for the host", errors.Join(err, errors.New("no go-ahead")))
	}
	return nil
}

func wrap(op string, err error) error {
	return errors.New(op + ": " + err.Error())
}

// setName sets the calling thread's name (comm); on the main thread that
// is the process's name.
func setName(name string) {
	b := append([]byte(name), 0)
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
	runtime.KeepAlive(b)
}
