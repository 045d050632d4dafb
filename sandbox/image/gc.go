package image

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// staleAge is how old a leftover temporary file or directory must be before
// GC treats it as the remains of an interrupted import and deletes it.
const staleAge = time.Hour

// Remove deletes the image that ref points at, with all its names, then
// garbage-collects: layers that another image still uses are kept, the rest
// are deleted. The caller must make sure no sandbox is running on the image:
// its layer directories may be mounted.
func (s *Store) Remove(ctx context.Context, ref string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	hex, err := s.resolve(ref)
	if err != nil {
		return err
	}
	id := "sha256:" + hex
	names, err := s.readNames()
	if err != nil {
		return err
	}
	for n, v := range names {
		if v == id {
			delete(names, n)
		}
	}
	if err := s.writeNames(names); err != nil {
		return err
	}
	if err := os.Remove(s.imagePath(hex)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("image: remove %s: %w", ref, err)
	}
	_, err = s.gcLocked()
	return err
}

// GC deletes layers and config blobs that no image uses (keeping those of
// imports in flight in this process) and leftovers of interrupted imports.
// It returns the diff ids of the layers it deleted.
func (s *Store) GC(ctx context.Context) ([]string, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.gcLocked()
}

// gcLocked does GC's work; the caller holds the metadata lock, which also
// covers s.pins.
func (s *Store) gcLocked() ([]string, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	usedLayers := map[string]bool{}
	usedBlobs := map[string]bool{}
	for h := range s.pins {
		usedLayers[h] = true
	}
	for _, hex := range ids {
		img, err := s.readImage(hex)
		if err != nil {
			return nil, fmt.Errorf("image: gc: %w", err)
		}
		usedBlobs[hex] = true
		for _, d := range img.Layers {
			usedLayers[strings.TrimPrefix(d, "sha256:")] = true
		}
	}
	var removed []string
	sweep := func(dir string, used map[string]bool, layers bool) error {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if strings.HasPrefix(e.Name(), ".") {
				removeIfStale(p)
				continue
			}
			if used[e.Name()] || len(e.Name()) != 64 || !isHex(e.Name()) {
				continue
			}
			if err := os.RemoveAll(p); err != nil {
				return err
			}
			if layers {
				removed = append(removed, "sha256:"+e.Name())
			}
		}
		return nil
	}
	if err := sweep(filepath.Join(s.dir, "layers"), usedLayers, true); err != nil {
		return removed, fmt.Errorf("image: gc layers: %w", err)
	}
	if err := sweep(filepath.Join(s.dir, "blobs", "sha256"), usedBlobs, false); err != nil {
		return removed, fmt.Errorf("image: gc blobs: %w", err)
	}
	for _, d := range []string{"tmp", "images"} {
		ents, _ := os.ReadDir(filepath.Join(s.dir, d))
		for _, e := range ents {
			if d == "tmp" || strings.HasPrefix(e.Name(), ".") {
				removeIfStale(filepath.Join(s.dir, d, e.Name()))
			}
		}
	}
	sort.Strings(removed)
	return removed, nil
}

// removeIfStale deletes p if its inode last changed more than staleAge ago.
// It looks at ctime, not mtime: an unpack sets mtimes from the tar.
func removeIfStale(p string) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err == nil && time.Since(time.Unix(st.Ctim.Unix())) > staleAge {
		os.RemoveAll(p)
	}
}
