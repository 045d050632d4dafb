// Package kube is the kubernetes sandbox driver: each sandbox is a Pod in
// one namespace, beside a Secret (its secrets and its record), a
// PersistentVolumeClaim (its workspace, kept across stop and start) and a
// NetworkPolicy (its egress), all labelled with the sandbox id and the
// office. The user's image is the sandbox container; the static helper of
// package podinit, copied from the Bullpen init image by an init
// container, is its PID 1, sets its egress rules from a second init
// container (so a CNI without NetworkPolicy support still blocks) and
// does its file operations.
//
// Commands and files go to the Pod's init over the pod network (package
// podinit's serve, authenticated with the sandbox's token), or through
// the apiserver's pods/exec subresource where this server does not reach
// Pod IPs (Config.Transport): see docs/kubernetes-driver.md. Snapshots
// are CSI VolumeSnapshots of the workspace where the cluster has them
// (snapshot.go). Pause, host mounts and bridges are refused with
// bullpen.EUNSUPPORTED naming the driver.
//
// Only cmd/bullpen imports this package; package sandboxes sees it as a
// sandboxes.Driver.
package kube

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Config configures a Driver. Client, Namespace and InitImage are
// required; REST is required for commands and files.
type Config struct {
	Client kubernetes.Interface
	// REST is the client configuration exec streams use.
	REST *rest.Config
	// Namespace holds every object of the sandboxes.
	Namespace string
	// Office names this Bullpen office in the objects' labels, so that
	// offices sharing a namespace leave each other's objects alone.
	// Default "default".
	Office string
	// InitImage is the Bullpen init image: bullpen-kube-init at
	// /bullpen-kube-init, nothing else needed.
	InitImage string
	// HostImage is the image of a sandbox whose spec says "host" (the
	// local runtime's host-tools base). Default: refuse "host".
	HostImage string
	// PullPolicy of every container; default IfNotPresent.
	PullPolicy corev1.PullPolicy
	// RuntimeClassName (gVisor, Kata) of the Pods; "" for the cluster's
	// default.
	RuntimeClassName string
	// StorageClassName of the workspace claims; "" for the cluster's
	// default. WorkspaceBytes is their size (default 1 GiB, or the spec's
	// DiskBytes when larger).
	StorageClassName string
	WorkspaceBytes   int64
	// Dynamic reaches the VolumeSnapshot API (snapshots); default: made
	// from REST. SnapshotClassName is the snapshots' class; "" for the
	// cluster's default.
	Dynamic           dynamic.Interface
	SnapshotClassName string
	// StartTimeout bounds a create or a start (the Pod Running);
	// default 2 minutes.
	StartTimeout time.Duration
	// GracePeriod is the Pods' terminationGracePeriodSeconds; default 5 s.
	GracePeriod time.Duration
	// Transport of commands and files: TransportAuto (default),
	// TransportPod or TransportAPIServer.
	Transport string
	// ReconcileInterval is how often Reconcile runs besides at start and
	// at each restart of the Pod watch; default 30 s.
	ReconcileInterval time.Duration
	// WarmPool is the number of pre-started Pods kept per template (0:
	// no pool). WarmPoolImages are the templates' images, each with the
	// default limits, workdir and network none (default: "host"): a
	// create with only such an image (and a name, tags, timeouts) claims
	// a member instead of starting a Pod.
	WarmPool       int
	WarmPoolImages []string
	// Mounts maps a path inside sandboxes to the PersistentVolumeClaim,
	// in Namespace, that holds the same files as the host directory a
	// spec mounts there (Spec.Mounts): the agent CLIs' directory, say.
	// A spec mount of another path is refused.
	Mounts map[string]string
	// Sandbox carries OnEvent, Now and the default limits
	// (DefaultCPU, DefaultMemoryBytes, DefaultDiskBytes, RunOutputLimit,
	// CheckInterval).
	Sandbox sandbox.Config
	Logger  *slog.Logger
}

// Driver runs sandboxes as Pods. It is safe for concurrent use.
type Driver struct {
	cfg  Config
	c    kubernetes.Interface
	ns   string
	exec execer
	dyn  dynamic.Interface // nil: snapshots are refused
	log  *slog.Logger

	mu   sync.Mutex
	recs map[string]*record // by id: this replica's cache of the records

	pool *pool

	bmu     sync.Mutex
	bridges map[string]*bridgeHold // by sandbox id: bridges this replica serves

	stop      chan struct{}
	closeOnce sync.Once // Close may be called more than once
	wg        sync.WaitGroup
}

// Name is how the driver names itself in refusals.
const Name = "kubernetes"

// New opens the driver: it reloads the office's sandboxes from their
// Secrets, deletes the objects no sandbox owns, marks sandboxes whose Pod
// vanished, and starts watching the Pods and the records and filling the
// warm pool.
func New(ctx context.Context, cfg Config) (*Driver, error) {
	if cfg.Client == nil || cfg.Namespace == "" || cfg.InitImage == "" {
		return nil, fmt.Errorf("kube: a client, a namespace and an init image are required")
	}
	if cfg.Office == "" {
		cfg.Office = "default"
	}
	if cfg.PullPolicy == "" {
		cfg.PullPolicy = corev1.PullIfNotPresent
	}
	if cfg.WorkspaceBytes <= 0 {
		cfg.WorkspaceBytes = 1 << 30
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 2 * time.Minute
	}
	if cfg.GracePeriod <= 0 {
		cfg.GracePeriod = 5 * time.Second
	}
	if cfg.ReconcileInterval <= 0 {
		cfg.ReconcileInterval = 30 * time.Second
	}
	sc := &cfg.Sandbox
	if sc.Now == nil {
		sc.Now = time.Now
	}
	if sc.DefaultCPU <= 0 {
		sc.DefaultCPU = 1
	}
	if sc.DefaultMemoryBytes <= 0 {
		sc.DefaultMemoryBytes = 512 << 20
	}
	if sc.DefaultDiskBytes <= 0 {
		sc.DefaultDiskBytes = 1 << 30
	}
	if sc.RunOutputLimit <= 0 {
		sc.RunOutputLimit = 16 << 20
	}
	if sc.CheckInterval <= 0 {
		sc.CheckInterval = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	d := &Driver{cfg: cfg, c: cfg.Client, ns: cfg.Namespace, log: cfg.Logger, recs: map[string]*record{}, bridges: map[string]*bridgeHold{}, stop: make(chan struct{})}
	api := &restExecer{c: cfg.Client, rest: cfg.REST, ns: cfg.Namespace}
	switch cfg.Transport {
	case "", TransportAuto:
		d.exec = newNetExecer(d, api)
	case TransportPod:
		d.exec = newNetExecer(d, nil)
	case TransportAPIServer:
		d.exec = api
	default:
		return nil, fmt.Errorf("kube: transport %q: want auto, pod or apiserver", cfg.Transport)
	}
	p, err := d.newPool(cfg.WarmPool, cfg.WarmPoolImages)
	if err != nil {
		return nil, err
	}
	d.pool = p
	d.dyn = cfg.Dynamic
	if d.dyn == nil && cfg.REST != nil {
		dyn, err := dynamic.NewForConfig(cfg.REST)
		if err != nil {
			return nil, fmt.Errorf("kube: a client for VolumeSnapshots: %w", err)
		}
		d.dyn = dyn
	}
	if err := d.Reconcile(ctx); err != nil {
		return nil, err
	}
	d.wg.Add(4)
	go d.recordsLoop()
	go d.watchLoop()
	go d.timeoutLoop()
	go d.poolLoop()
	return d, nil
}

// Close stops the watch and the timeout checks; the sandboxes keep
// running and the next New takes them over.
func (d *Driver) Close() error {
	d.closeOnce.Do(func() { close(d.stop); d.dropAllBridges() })
	d.wg.Wait()
	return nil
}

// Defaults returns the CPU and memory of a spec that sets none.
func (d *Driver) Defaults() (cpu float64, memoryBytes int64) {
	return d.cfg.Sandbox.DefaultCPU, d.cfg.Sandbox.DefaultMemoryBytes
}

// Office is the office label value the driver's objects carry.
func (d *Driver) Office() string { return d.cfg.Office }

// InitPath is "": the init binary lives in the init image, not on this
// host.
func (d *Driver) InitPath() string { return "" }

func (d *Driver) emit(typ sandbox.EventType, id, detail string) {
	if f := d.cfg.Sandbox.OnEvent; f != nil {
		f(sandbox.Event{Type: typ, SandboxID: id, Time: d.cfg.Sandbox.Now(), Detail: detail})
	}
}
