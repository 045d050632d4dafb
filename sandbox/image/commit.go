package image

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Commit turns the overlay upper directory upperDir (a sandbox's writable
// layer, with overlay whiteouts) into a new layer and an image named name
// whose layers are baseRef's layers plus the new one. baseRef may be
// BaseHost: the new image then records Base "host" and holds only layers of
// this store. It returns the new image's id ("sha256:…").
//
// The upper directory is read, never changed. The overlay must be mounted
// without redirect_dir and metacopy: an upper directory that uses them is
// refused with EUNSUPPORTED.
func (s *Store) Commit(ctx context.Context, name string, baseRef string, upperDir string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	cf := &v1.ConfigFile{OS: "linux", Architecture: runtime.GOARCH}
	switch baseRef {
	case "":
		return "", bullpen.Errorf(bullpen.EINVALID, "commit needs a base image")
	case BaseHost:
		cf.Config.Labels = map[string]string{labelBase: BaseHost}
	default:
		base, err := s.Get(ctx, baseRef)
		if err != nil {
			return "", err
		}
		raw, err := os.ReadFile(s.blobPath(strings.TrimPrefix(base.ID, "sha256:")))
		if err != nil {
			return "", fmt.Errorf("image: commit: base config %s: %w", base.ID, err)
		}
		if cf, err = v1.ParseConfigFile(bytes.NewReader(raw)); err != nil {
			return "", fmt.Errorf("image: commit: base config %s: %w", base.ID, err)
		}
	}
	var baseLayers []string
	for _, d := range cf.RootFS.DiffIDs {
		baseLayers = append(baseLayers, d.Hex)
	}
	defer s.pin(baseLayers)() // keep the base's layers even if the base goes meanwhile
	if fi, err := os.Stat(upperDir); err != nil {
		return "", asNotFound(fmt.Errorf("image: commit: %w", err), fmt.Sprintf("upper directory %q not found", upperDir))
	} else if !fi.IsDir() {
		return "", bullpen.Errorf(bullpen.EINVALID, "upper directory %q is not a directory", upperDir)
	}

	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "commit-*.tar")
	if err != nil {
		return "", fmt.Errorf("image: commit: %w", err)
	}
	defer os.Remove(f.Name())
	h := sha256.New()
	err = writeLayerTar(ctx, upperDir, io.MultiWriter(f, h))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if bullpen.ErrorCode(err) != bullpen.EINTERNAL {
			return "", err
		}
		return "", fmt.Errorf("image: commit: tar %s: %w", upperDir, err)
	}
	diffID := v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}

	defer s.pin([]string{diffID.Hex})()
	open := func() (io.ReadCloser, error) { return os.Open(f.Name()) }
	if err := s.ensureLayer(ctx, diffID.Hex, open); err != nil {
		return "", fmt.Errorf("image: unpack layer %s: %w", diffID, err)
	}

	now := time.Now().UTC()
	cf.RootFS.Type = "layers"
	cf.RootFS.DiffIDs = append(cf.RootFS.DiffIDs[:len(cf.RootFS.DiffIDs):len(cf.RootFS.DiffIDs)], diffID)
	cf.History = append(cf.History, v1.History{Created: v1.Time{Time: now}, CreatedBy: "bullpen: sandbox commit"})
	cf.Created = v1.Time{Time: now}
	raw, err := json.Marshal(cf)
	if err != nil {
		return "", fmt.Errorf("image: commit: %w", err)
	}
	img := &Image{ID: digestOf(raw), Env: cf.Config.Env, WorkDir: cf.Config.WorkingDir, Created: now}
	if cf.Config.Labels[labelBase] == BaseHost {
		img.Base = BaseHost
	}
	for _, d := range cf.RootFS.DiffIDs {
		img.Layers = append(img.Layers, d.String())
	}
	if _, err := s.record(img, raw, name); err != nil {
		return "", err
	}
	return img.ID, nil
}

// writeLayerTar writes the overlay-format tree under root as an OCI layer
// tar: whiteout devices become ".wh.<name>" entries, opaque directories get
// a ".wh..wh..opq" entry. The tar is a function of the tree alone (sorted
// walk, no user names, mtimes in whole seconds), so equal trees give equal
// diff ids. Other devices and sockets are skipped.
func writeLayerTar(ctx context.Context, root string, w io.Writer) error {
	tw := newTreeWriter(w)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		return tw.add(p, filepath.ToSlash(rel))
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// Export writes the image that ref points at to path as a docker tarball
// (docker load and ImportTarball read it). Layers are re-made from their
// unpacked directories, so an image that came from elsewhere may get other
// diff ids, and so another id, than it has here; the file system contents
// and config (env, working dir, labels, base) are the same. The tarball is
// tagged with the image's first name when that is a valid docker tag.
func (s *Store) Export(ctx context.Context, ref, path string) error {
	img, err := s.Get(ctx, ref)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(s.blobPath(strings.TrimPrefix(img.ID, "sha256:")))
	if err != nil {
		return fmt.Errorf("image: export %s: config: %w", ref, err)
	}
	cf, err := v1.ParseConfigFile(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("image: export %s: config: %w", ref, err)
	}
	base := cf.DeepCopy()
	base.RootFS.DiffIDs, base.History = nil, nil
	out, err := mutate.ConfigFile(empty.Image, base)
	if err != nil {
		return fmt.Errorf("image: export %s: %w", ref, err)
	}
	for _, d := range img.Layers {
		dir := s.layerPath(strings.TrimPrefix(d, "sha256:"))
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			pr, pw := io.Pipe()
			go func() { pw.CloseWithError(writeLayerTar(ctx, dir, pw)) }()
			return pr, nil
		})
		if err != nil {
			return fmt.Errorf("image: export %s: layer %s: %w", ref, d, err)
		}
		if out, err = mutate.Append(out, mutate.Addendum{Layer: layer, History: v1.History{CreatedBy: "bullpen: export of " + d}}); err != nil {
			return fmt.Errorf("image: export %s: %w", ref, err)
		}
	}
	var tag name.Reference
	if len(img.Names) > 0 {
		tag, _ = name.NewTag(img.Names[0])
	}
	if tag == nil {
		// A digest reference writes no RepoTags: the tarball is unnamed.
		tag, err = name.NewDigest("bullpen.invalid/export@" + img.ID)
		if err != nil {
			return fmt.Errorf("image: export %s: %w", ref, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("image: export %s: %w", ref, err)
	}
	tmp := path + ".tmp"
	if err := tarball.WriteToFile(tmp, tag, out); err != nil {
		os.Remove(tmp)
		if bullpen.ErrorCode(err) != bullpen.EINTERNAL {
			return err
		}
		return fmt.Errorf("image: export %s: %w", ref, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("image: export %s: %w", ref, err)
	}
	return nil
}
