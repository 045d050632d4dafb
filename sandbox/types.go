package sandbox

import (
	"context"
	"io"
	"net"
	"os"
	"time"
)

// ImageSource resolves image references to overlay lower layers and turns a
// sandbox's writable layer into a new image. *image.Store (package
// sandbox/image) satisfies it. If the source also has a method
// Base(ctx, ref) (string, error) returning "host", the image's layers are
// stacked on the built-in host-tools base.
type ImageSource interface {
	// Resolve returns the image's layer directories (lowest first, absolute
	// paths), its config env ("K=V") and its working directory.
	Resolve(ctx context.Context, ref string) (layers []string, env []string, workdir string, err error)
	// Commit turns upperDir (an overlay upper directory, whiteouts in
	// overlayfs format) into a new image named name on top of baseRef.
	Commit(ctx context.Context, name string, baseRef string, upperDir string) (ref string, err error)
}

// Config configures a Manager. Only StateDir is required.
type Config struct {
	// StateDir holds per-sandbox directories (metadata, writable layers),
	// fallback snapshot images and the host-tools base skeleton.
	StateDir string
	// RunDir holds the sandboxes' root filesystem mount points. It and its
	// parents must be traversable by the sandbox uid range. Default:
	// /run/bullpen-sandbox.
	RunDir string
	// Images resolves image references other than "host". Optional.
	Images ImageSource
	// Now returns the current time; default time.Now.
	Now func() time.Time
	// OnEvent is called, outside any lock, on every state change. It must
	// not block for long.
	OnEvent func(Event)
	// NetworkCIDR is the IPv4 pool from which each networked sandbox gets a
	// /30 for its veth pair. Default 10.231.0.0/16.
	NetworkCIDR string
	// RouterNetNS is the path of the network namespace that holds the host
	// ends of the veth pairs and the nftables rules (e.g.
	// /var/run/netns/NAME). Default: the Manager's own network namespace.
	// An allowlist never reaches an address of this namespace (nor another
	// sandbox); with a separate router namespace, keeping the real host
	// unreachable from it is up to the operator's routing there.
	RouterNetNS string
	// Resolve resolves Spec.Network.Domains; default net.DefaultResolver.
	Resolve func(ctx context.Context, host string) ([]net.IP, error)
	// IDMapBase is the first host uid/gid of the 65536 ids the sandboxes'
	// user namespaces map (uid 0 inside = IDMapBase outside). Default 100000.
	IDMapBase uint32
	// CgroupParent is the cgroup (relative to each hierarchy's root) under
	// which per-sandbox cgroups are made. Default "bullpen-sandbox".
	CgroupParent string
	// Defaults for Spec fields left zero: every sandbox is bounded. The
	// zero value of each means the library default.
	DefaultMemoryBytes int64   // default 512 MiB
	DefaultPids        int64   // tasks (threads) of the commands; default 256
	DefaultCPU         float64 // cores; default 1 (the host's cores if fewer)
	// DefaultNoFile is RLIMIT_NOFILE (soft and hard) of init and every
	// command: open files per process. The files one sandbox holds open are
	// then at most about Pids × NoFile, and their kernel memory is charged
	// to its memory cgroup. Default 1024.
	DefaultNoFile int64
	// DefaultDiskBytes is the size of the writable layer (an ext4 image on
	// a loop device); default 1 GiB. DefaultInodes is its inode count;
	// default 65536 (fewer on small disks: one per 4 KiB).
	DefaultDiskBytes int64
	DefaultInodes    int64
	// DiskQuotaOff is for hosts that cannot enforce disk quotas (no loop
	// devices or mkfs.ext4): sandboxes that do not ask for DiskBytes get an
	// unbounded writable layer, flagged Info.DiskUnbounded. Without it, a
	// Create the host cannot give a quota fails; there is no silent
	// fallback.
	DiskQuotaOff bool
	// DefaultCgroupLock leaves the kernel's cgroup migration lock in its
	// default mode. Without it the Manager switches the lock to the
	// "favordynmods" mode while it runs (see cgrouplock.go): moving each
	// new init into its cgroups then takes microseconds instead of an RCU
	// grace period (milliseconds), at a small cost to every fork and exit
	// on the host.
	DefaultCgroupLock bool
	// MaxParallelCreates is how many creates provision at once; more wait
	// (in a burst, each create would otherwise take as long as all of
	// them together). Default: twice GOMAXPROCS.
	MaxParallelCreates int
	// InitPool is how many sandbox inits the Manager keeps started ahead
	// of time, each already in its own cgroups, for fresh Creates to take
	// (Start of a stopped sandbox starts a new one). nil: DefaultInitPool;
	// 0: none, every Create starts its init; negative: invalid.
	InitPool *int
	// RunOutputLimit caps the stdout and the stderr Run captures (each);
	// the rest is read and discarded and RunResult.Truncated is set.
	// Default 16 MiB.
	RunOutputLimit int64
	// CheckInterval is how often timeouts and idle timeouts are checked.
	// Default 1s.
	CheckInterval time.Duration
	// OnRestart says what New does with sandboxes a previous process left:
	// RestartAdopt (default) re-adopts live ones and keeps stopped ones,
	// RestartReap terminates them all.
	OnRestart RestartPolicy
	// InitPath is the dedicated sandbox init binary (cmd/bullpen-sandbox-
	// init) to run as each sandbox's PID 1; New fails if it does not work.
	// Default: InitBinaryName next to the running executable if it is there
	// and works, else the Manager re-executes its own binary (which must
	// call MaybeRunInit first thing in main). The dedicated binary starts
	// faster and costs far less memory per sandbox than a big server binary
	// whose package initializers would run in every sandbox. It must be
	// executable by others; it is opened once, at New. "/proc/self/exe"
	// forces the re-exec.
	InitPath string

	lookPath func(string) (string, error) // default exec.LookPath; tests replace it
}

// RestartPolicy is what New does with sandboxes found in StateDir.
type RestartPolicy string

// Restart policies.
const (
	RestartAdopt RestartPolicy = "adopt"
	RestartReap  RestartPolicy = "reap"
)

// Secret is a value injected into a sandbox as an environment variable
// (File == "") or a file (mode 0400, owned by the sandbox user). Secret
// values are never logged, never returned by Get/List and never included in
// snapshots.
type Secret struct {
	Name  string
	Value string
	File  string // absolute path inside the sandbox; optional
}

// NetworkPolicy is a sandbox's egress policy. The zero value means no
// network at all (loopback only).
type NetworkPolicy struct {
	// Allow lists IPv4 CIDRs the sandbox may reach.
	Allow []string `json:"allow,omitempty"`
	// Domains are resolved on the host when the sandbox is created; their
	// IPv4 addresses join the allowed set (as /32s) and the names go into
	// the sandbox's /etc/hosts. Later DNS changes are not followed.
	Domains []string `json:"domains,omitempty"`
}

// IdleAction is what happens to a sandbox whose IdleTimeout passes.
type IdleAction string

// Idle actions.
const (
	IdleStop      IdleAction = "stop" // default: processes end, files kept
	IdlePause     IdleAction = "pause"
	IdleTerminate IdleAction = "terminate"
)

// Spec describes a sandbox to create.
type Spec struct {
	// Image is "host" (default): the host-tools base, or a reference the
	// Config.Images source resolves, or a snapshot name.
	Image   string
	Name    string // optional, unique among live sandboxes
	Tags    map[string]string
	Workdir string // default /home/sandbox (host) or the image's workdir

	CPU         float64 // cores, fractional; 0 = Config.DefaultCPU
	MemoryBytes int64   // 0 = Config.DefaultMemoryBytes
	Pids        int64   // 0 = Config.DefaultPids
	NoFile      int64   // open files per process; 0 = Config.DefaultNoFile
	// DiskBytes is the quota on the writable layer and Inodes its inode
	// count; 0 = Config.DefaultDiskBytes / DefaultInodes (no quota when
	// Config.DiskQuotaOff).
	DiskBytes int64
	Inodes    int64

	Env     map[string]string
	Secrets []Secret

	// Timeout is the sandbox's whole lifetime; it is terminated after it.
	Timeout time.Duration
	// IdleTimeout applies IdleAction after this long without exec or file
	// activity (a running exec counts as activity).
	IdleTimeout time.Duration
	IdleAction  IdleAction

	Network NetworkPolicy
	Ports   []int // published on create, as by PublishPort

	// Mounts are read-only bind mounts of host directories (e.g. the
	// installed agent CLIs). Nothing in the sandbox can write to them.
	Mounts []Mount
	// Bridges each make a loopback port inside the sandbox that reaches
	// one host unix socket, whatever the network policy: the one
	// deliberate channel out of a sandbox with network "none".
	Bridges []Bridge
}

// Mount is a read-only bind of the host directory HostPath at Path inside
// the sandbox.
type Mount struct {
	HostPath string `json:"host_path"`
	Path     string `json:"path"`
}

// Bridge forwards each connection to 127.0.0.1:Port inside the sandbox to
// the host unix socket HostSocket. The listening socket lives in the
// sandbox's network namespace but is held by the Manager, so the socket
// file is never visible in the sandbox: only the bytes of each connection
// cross. Use one socket per sandbox so that its server knows who calls.
type Bridge struct {
	Port       int    `json:"port"`
	HostSocket string `json:"host_socket"`
}

// State is a sandbox's lifecycle state.
type State string

// States.
const (
	StateRunning    State = "running"
	StatePaused     State = "paused"
	StateStopped    State = "stopped"
	StateTerminated State = "terminated"
)

// PortInfo is a published port: connections to HostAddr reach the sandbox's
// 127.0.0.1:Port.
type PortInfo struct {
	Port     int    `json:"port"`
	HostAddr string `json:"host_addr"`
}

// Info describes a sandbox. It never contains secret values.
type Info struct {
	ID          string            `json:"id"`
	Name        string            `json:"name,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	Image       string            `json:"image"`
	State       State             `json:"state"`
	Workdir     string            `json:"workdir"`
	CPU         float64           `json:"cpu"`
	MemoryBytes int64             `json:"memory_bytes"`
	Pids        int64             `json:"pids"`
	DiskBytes   int64             `json:"disk_bytes"`
	Inodes      int64             `json:"inodes,omitempty"`
	NoFile      int64             `json:"nofile,omitempty"`
	// DiskUnbounded is set when the writable layer has no quota (the
	// operator turned disk quotas off).
	DiskUnbounded bool              `json:"disk_unbounded,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
	SecretNames   []string          `json:"secret_names,omitempty"`
	Timeout       time.Duration     `json:"timeout"`
	IdleTimeout   time.Duration     `json:"idle_timeout"`
	IdleAction    IdleAction        `json:"idle_action"`
	Network       NetworkPolicy     `json:"network"`
	// AllowedCIDRs are the resolved allowed destinations.
	AllowedCIDRs []string   `json:"allowed_cidrs,omitempty"`
	Ports        []PortInfo `json:"ports,omitempty"`
	Mounts       []Mount    `json:"mounts,omitempty"`
	Bridges      []Bridge   `json:"bridges,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	StartedAt    time.Time  `json:"started_at,omitempty"`
	// ExpiresAt is when Timeout terminates the sandbox; zero if never.
	ExpiresAt    time.Time `json:"expires_at,omitempty"`
	LastActivity time.Time `json:"last_activity"`
}

// EventType names a sandbox state change.
type EventType string

// Event types.
const (
	EventCreated      EventType = "created"
	EventStarted      EventType = "started"
	EventPaused       EventType = "paused"
	EventResumed      EventType = "resumed"
	EventStopped      EventType = "stopped"
	EventTerminated   EventType = "terminated"
	EventTimedOut     EventType = "timed_out"
	EventExecStarted  EventType = "exec_started"
	EventExecFinished EventType = "exec_finished"
	EventAdopted      EventType = "adopted"
	EventCrashed      EventType = "crashed"
)

// Event is a sandbox state change reported through Config.OnEvent.
type Event struct {
	Type      EventType `json:"type"`
	SandboxID string    `json:"sandbox_id"`
	Time      time.Time `json:"time"`
	// Detail: for exec events the command name and exit code; for
	// timed_out "timeout" or "idle".
	Detail string `json:"detail,omitempty"`
}

// ExecRequest is a command to run in a sandbox as the sandbox user.
type ExecRequest struct {
	Cmd     []string
	Env     map[string]string
	Workdir string        // default: the sandbox's Workdir
	Timeout time.Duration // 0 = none; the process group is killed after it
	Stdin   io.Reader     // nil = /dev/null
	// KillTree runs the command in its own cgroup: when it ends (exit,
	// crash, timeout, Kill or context cancellation) every process it
	// started is killed too, even ones that left its process group or
	// session (setsid, double fork).
	KillTree bool
	// PTY runs the command on a terminal of this size (under script(1)
	// in the sandbox: stdout and stderr arrive joined, as a terminal shows
	// them); PTYResizeCommand resizes it. Cmd stays what was asked for,
	// so the exec history shows the command, not the wrapper.
	PTY *PTYSize
}

// PTYSize is a terminal's size in characters.
type PTYSize struct{ Rows, Cols int }

// ExitResult is how a process ended.
type ExitResult struct {
	Code     int    `json:"code"`             // exit status; -1 if killed by a signal
	Signal   string `json:"signal,omitempty"` // e.g. "killed"
	TimedOut bool   `json:"timed_out,omitempty"`
}

// RunResult is the outcome of Run.
type RunResult struct {
	Stdout    []byte
	Stderr    []byte
	ExitCode  int
	Signal    string
	TimedOut  bool
	Truncated bool // output beyond Config.RunOutputLimit was discarded
	Duration  time.Duration
}

// FileInfo describes a file in a sandbox.
type FileInfo struct {
	Name    string      `json:"name"`
	Path    string      `json:"path"`
	Size    int64       `json:"size"`
	Mode    os.FileMode `json:"mode"`
	ModTime time.Time   `json:"mod_time"`
	IsDir   bool        `json:"is_dir"`
	// LinkTarget is set for symbolic links.
	LinkTarget string `json:"link_target,omitempty"`
}

// Usage is a sandbox's resource usage.
type Usage struct {
	CPUSeconds  float64 `json:"cpu_seconds"`
	MemoryBytes int64   `json:"memory_bytes"`
	Pids        int64   `json:"pids"`
}
