package sandboxes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/bullpen-hq/bullpen/sandbox/image"
)

// ErrNeedsRoot is why OpenInDir refuses a process that is not root:
// namespaces, cgroups and overlayfs need it.
var ErrNeedsRoot = errors.New("bullpen must run as root for them")

// OpenInDir opens the sandboxes of an office whose data lives in dataDir:
// OCI images in dataDir/images, sandbox state in dataDir/sandboxes (cfg's
// Images and Sandbox.StateDir are set; the rest of cfg is used as given).
// euid is the process's effective user ID (os.Geteuid()); anything but
// root gets ErrNeedsRoot before a directory is made. With cfg.Driver (a
// driver other than the local one) root is not needed and there is no
// local image store: image routes answer 503. With disk quotas
// off it warns that writable layers are unbounded.
func OpenInDir(ctx context.Context, dataDir string, euid int, cfg Config) (*Service, error) {
	if cfg.Driver != nil {
		// Another driver's images are its own (a cluster pulls them):
		// the local image store would only fill a disk nothing reads.
		cfg.Sandbox.StateDir = filepath.Join(dataDir, "sandboxes")
		return Open(ctx, cfg)
	}
	if euid != 0 {
		return nil, ErrNeedsRoot
	}
	images, err := image.Open(filepath.Join(dataDir, "images"))
	if err != nil {
		return nil, fmt.Errorf("sandboxes: %w", err)
	}
	cfg.Images, cfg.Sandbox.StateDir = images, filepath.Join(dataDir, "sandboxes")
	if cfg.Sandbox.DiskQuotaOff {
		log := cfg.Logger
		if log == nil {
			log = slog.Default()
		}
		log.Warn("sandbox disk quotas are off: sandboxes' writable layers are unbounded")
	}
	return Open(ctx, cfg)
}

// OpenOrExplain opens the sandboxes as OpenInDir does, for a server that
// runs without them when it cannot: turned off (on false), without root,
// or on a host that lacks what they need. Then svc is nil and down says
// why in words for /healthz ("" when turned off); the log (cfg.Logger)
// says it with the details.
func OpenOrExplain(ctx context.Context, dataDir string, on bool, cfg Config) (svc *Service, down string) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if !on {
		log.Info("sandboxes are turned off")
		return nil, ""
	}
	svc, err := OpenInDir(ctx, dataDir, os.Geteuid(), cfg)
	if errors.Is(err, ErrNeedsRoot) {
		log.Warn("sandboxes are unavailable: " + err.Error())
		return nil, "sandboxes need root"
	}
	if err != nil {
		log.Error("sandboxes are unavailable", "err", err)
		return nil, "the sandbox runtime did not start; see the server log"
	}
	return svc, ""
}
