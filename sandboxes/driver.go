package sandboxes

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
)

// Driver runs the sandboxes themselves: the local runtime
// (*sandbox.Manager) or another one, such as the kubernetes driver
// (package sandbox/kube). It is exactly what the Service uses. What a
// driver cannot do it refuses with a bullpen.EUNSUPPORTED error naming
// itself ("the kubernetes driver cannot pause a sandbox"), which the REST
// layer answers with 501; it never fakes it.
type Driver interface {
	Create(ctx context.Context, spec sandbox.Spec) (sandbox.Info, error)
	Get(ctx context.Context, idOrName string) (sandbox.Info, error)
	List(ctx context.Context, tags map[string]string) ([]sandbox.Info, error)

	Exec(ctx context.Context, id string, req sandbox.ExecRequest) (*sandbox.Process, error)
	Run(ctx context.Context, id string, req sandbox.ExecRequest) (sandbox.RunResult, error)
	Preconnect(ctx context.Context, id string) error

	Start(ctx context.Context, id string) error
	Stop(ctx context.Context, id string) error
	Pause(ctx context.Context, id string) error
	Resume(ctx context.Context, id string) error
	Terminate(ctx context.Context, id string) error
	TerminateAll(ctx context.Context) error
	Snapshot(ctx context.Context, id, name string) (string, error)
	Stats(ctx context.Context, id string) (sandbox.Usage, error)

	ReadFile(ctx context.Context, id, p string) (io.ReadCloser, error)
	WriteFile(ctx context.Context, id, p string, src io.Reader, mode os.FileMode) error
	ListFiles(ctx context.Context, id, dir string) ([]sandbox.FileInfo, error)
	Stat(ctx context.Context, id, p string) (sandbox.FileInfo, error)
	Mkdir(ctx context.Context, id, p string, parents bool) error
	Remove(ctx context.Context, id, p string, recursive bool) error
	Rename(ctx context.Context, id, from, to string) error

	PublishPort(ctx context.Context, id string, port int) (sandbox.PortInfo, error)
	RevokePort(ctx context.Context, id string, port int) error
	ListPorts(ctx context.Context, id string) ([]sandbox.PortInfo, error)
	SetNetwork(ctx context.Context, id string, p sandbox.NetworkPolicy) error
	SetTimeout(ctx context.Context, id string, d time.Duration) error
	Attach(ctx context.Context, id string, mounts []sandbox.Mount, bridges []sandbox.Bridge) error

	// Defaults are the CPU and memory a sandbox gets when its spec sets
	// none.
	Defaults() (cpu float64, memoryBytes int64)
	// InitPath is the sandbox init binary new sandboxes need on this
	// host, "" when the driver needs none here.
	InitPath() string
	Close() error
}

// NewDriver opens a driver with the Service's sandbox configuration
// (OnEvent set to the Service's event writer; a driver other than the
// Manager reads what applies to it).
type NewDriver func(ctx context.Context, cfg sandbox.Config) (Driver, error)

var _ Driver = (*sandbox.Manager)(nil)

// openManager is the default NewDriver: the local runtime.
func openManager(ctx context.Context, cfg sandbox.Config) (Driver, error) {
	return sandbox.New(ctx, cfg)
}

// Opener adapts a driver's constructor (kube.Options.Open, say) to
// NewDriver.
func Opener[D Driver](open func(context.Context, sandbox.Config) (D, error)) NewDriver {
	return func(ctx context.Context, cfg sandbox.Config) (Driver, error) {
		d, err := open(ctx, cfg)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return d, nil
	}
}
