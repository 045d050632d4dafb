// Package image is a content-addressed store of container images for the
// local sandbox runtime.
//
// Images come from a docker or OCI tarball, an OCI image layout directory, a
// registry, or from committing a sandbox's overlay upper directory. Each
// layer is unpacked once, in overlayfs format (whiteouts are 0/0 character
// devices, opaque directories carry trusted.overlay.opaque=y), into a
// directory that all sandboxes share read-only as overlay lower layers.
//
// Layout under the store directory:
//
//	blobs/sha256/<hex>     image config files (an image's id is its config digest)
//	layers/<diffid-hex>/   unpacked layers, named by their uncompressed digest
//	images/<hex>.json      image manifests (see Image)
//	names.json             the names index: name -> image id
//	tmp/                   scratch space for layer tars
//	lock                   flock(2) guarding metadata across processes
//
// Layers are unpacked into a temporary directory next to their final place
// and renamed into it, so readers never see a partial layer and concurrent
// imports of one layer, in this process or another, are safe.
//
// Notes for the runtime: layers keep the uids, gids, modes (set-id bits
// included) and xattrs of the image, unshifted; a sandbox that writes
// through an idmapped or otherwise unshifted view leaves the upper directory
// in the same terms, which is what Commit expects. Mount the overlay with
// redirect_dir=off,metacopy=off (Commit refuses uppers that use them) and
// with trusted.* xattrs (not userxattr) so lower layers' opaque markers count.
// Images committed on the runtime's host-tools base report Base "host":
// their layers go on top of that base.
package image

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// BaseHost is the base of an image committed from a sandbox that ran on the
// runtime's built-in host-tools base. The store does not own that base: such
// an image's layers sit on top of it.
const BaseHost = "host"

// Image is an image's manifest, as kept in images/<hex>.json.
type Image struct {
	// ID is the digest of the image config, "sha256:<64 hex>".
	ID string `json:"id"`
	// Names are the names that point at this image; each name points at
	// exactly one image.
	Names []string `json:"names,omitempty"`
	// Layers are the layer diff ids ("sha256:<hex>"), lowest first.
	Layers []string `json:"layers"`
	// Env is the config environment, "K=V" each.
	Env []string `json:"env,omitempty"`
	// WorkDir is the config working directory.
	WorkDir string `json:"workdir,omitempty"`
	// Base is BaseHost when the image sits on the runtime's host-tools base,
	// "" when Layers are the whole root filesystem.
	Base string `json:"base,omitempty"`
	// Created is when the image entered this store.
	Created time.Time `json:"created"`
}

// Store is a content-addressed image store rooted at one directory. Its
// methods are safe for concurrent use. Metadata changes are also serialized
// across processes with a lock file; garbage collection only knows about
// imports in flight in its own process, so share one Store per directory per
// process.
type Store struct {
	dir string

	mu   sync.Mutex     // guards pins and metadata writes within the process
	pins map[string]int // diff id hex -> imports in flight using it

	layerMu sync.Mutex
	layerWG map[string]*layerCall // diff id hex -> unpack in flight

	unpacks atomic.Int64 // layer unpacks this Store started, for tests
}

type layerCall struct {
	done chan struct{}
	err  error
}

// Open opens the store rooted at dir, creating its layout if needed.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("image: open: empty directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("image: open %s: %w", dir, err)
	}
	for _, sub := range []string{"blobs/sha256", "layers", "images", "tmp"} {
		if err := os.MkdirAll(filepath.Join(abs, sub), 0o700); err != nil {
			return nil, fmt.Errorf("image: open %s: %w", dir, err)
		}
	}
	return &Store{
		dir:     abs,
		pins:    map[string]int{},
		layerWG: map[string]*layerCall{},
	}, nil
}

// Dir returns the store's root directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) layerPath(hex string) string { return filepath.Join(s.dir, "layers", hex) }
func (s *Store) blobPath(hex string) string  { return filepath.Join(s.dir, "blobs", "sha256", hex) }
func (s *Store) imagePath(hex string) string {
	return filepath.Join(s.dir, "images", hex+".json")
}

// lock takes the in-process and the cross-process metadata lock.
func (s *Store) lock() (unlock func(), err error) {
	s.mu.Lock()
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("image: lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		s.mu.Unlock()
		return nil, fmt.Errorf("image: lock: %w", err)
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
		s.mu.Unlock()
	}, nil
}

// pin marks layers as in use by an import in flight, so that a concurrent
// garbage collection keeps them; the returned func unpins them.
func (s *Store) pin(hexes []string) (unpin func()) {
	s.mu.Lock()
	for _, h := range hexes {
		s.pins[h]++
	}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		for _, h := range hexes {
			if s.pins[h]--; s.pins[h] <= 0 {
				delete(s.pins, h)
			}
		}
		s.mu.Unlock()
	}
}

// writeFileAtomic writes data to path through a synced temporary file and a
// rename, so readers see the old or the new content, never a mix.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'))
}

// readNames reads the names index; a missing index is empty.
func (s *Store) readNames() (map[string]string, error) {
	names := map[string]string{}
	data, err := os.ReadFile(filepath.Join(s.dir, "names.json"))
	if os.IsNotExist(err) {
		return names, nil
	}
	if err != nil {
		return nil, fmt.Errorf("image: read names: %w", err)
	}
	if err := json.Unmarshal(data, &names); err != nil {
		return nil, fmt.Errorf("image: read names: %w", err)
	}
	return names, nil
}

func (s *Store) writeNames(names map[string]string) error {
	if err := writeJSON(filepath.Join(s.dir, "names.json"), names); err != nil {
		return fmt.Errorf("image: write names: %w", err)
	}
	return nil
}

// readImage reads the manifest of the image with the given id hex.
func (s *Store) readImage(hex string) (*Image, error) {
	data, err := os.ReadFile(s.imagePath(hex))
	if err != nil {
		return nil, err
	}
	var img Image
	if err := json.Unmarshal(data, &img); err != nil {
		return nil, fmt.Errorf("image: read manifest %s: %w", hex, err)
	}
	return &img, nil
}

// ctxErr returns ctx's error, if it is done.
func ctxErr(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
		return nil
	}
}
