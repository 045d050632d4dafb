package image

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/bullpen-hq/bullpen"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"golang.org/x/sys/unix"
)

// labelBase is the config label that records an image's base, so that an
// exported host-based image keeps its base when imported again.
const labelBase = "dev.bullpen.image.base"

// defaultPlatform is the platform picked from multi-platform images.
func defaultPlatform() v1.Platform {
	return v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
}

// ImportLayout imports an image from the OCI image layout directory dir and
// names it name. The layout must hold one image, or exactly one for this
// machine's platform.
func (s *Store) ImportLayout(ctx context.Context, dir, name string) (*Image, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		if os.IsNotExist(err) {
			return nil, bullpen.Errorf(bullpen.ENOTFOUND, "no OCI image layout at %q", dir)
		}
		return nil, fmt.Errorf("image: import layout %s: %w", dir, err)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, &bullpen.Error{Code: bullpen.EINVALID, Message: fmt.Sprintf("invalid OCI image layout at %q", dir), Err: err}
	}
	img, err := pickImage(idx, defaultPlatform())
	if err != nil {
		return nil, err
	}
	return s.importImage(ctx, img, name)
}

// pickImage returns the one image in idx (searching nested indexes), or the
// one that matches platform.
func pickImage(idx v1.ImageIndex, platform v1.Platform) (v1.Image, error) {
	type cand struct {
		idx  v1.ImageIndex
		desc v1.Descriptor
	}
	var all []cand
	var walk func(v1.ImageIndex, int) error
	walk = func(ix v1.ImageIndex, depth int) error {
		m, err := ix.IndexManifest()
		if err != nil {
			return err
		}
		for _, d := range m.Manifests {
			switch {
			case d.MediaType.IsImage():
				all = append(all, cand{ix, d})
			case d.MediaType.IsIndex() && depth < 4:
				child, err := ix.ImageIndex(d.Digest)
				if err != nil {
					return err
				}
				if err := walk(child, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(idx, 0); err != nil {
		return nil, &bullpen.Error{Code: bullpen.EINVALID, Message: "invalid image index", Err: err}
	}
	pick := all
	if len(all) > 1 {
		pick = nil
		for _, c := range all {
			if c.desc.Platform != nil && c.desc.Platform.Satisfies(platform) {
				pick = append(pick, c)
			}
		}
	}
	switch len(pick) {
	case 0:
		return nil, bullpen.Errorf(bullpen.EINVALID, "no image for %s in the index", platform.String())
	case 1:
		img, err := pick[0].idx.Image(pick[0].desc.Digest)
		if err != nil {
			return nil, &bullpen.Error{Code: bullpen.EINVALID, Message: "invalid image in the index", Err: err}
		}
		return img, nil
	}
	return nil, bullpen.Errorf(bullpen.EINVALID, "the index holds %d images for %s; cannot pick one", len(pick), platform.String())
}

// importImage unpacks img's layers that the store lacks and records img
// under name.
func (s *Store) importImage(ctx context.Context, img v1.Image, name string) (*Image, error) {
	raw, err := img.RawConfigFile()
	if err != nil {
		return nil, &bullpen.Error{Code: bullpen.EINVALID, Message: "cannot read the image config", Err: err}
	}
	cf, err := v1.ParseConfigFile(bytes.NewReader(raw))
	if err != nil {
		return nil, &bullpen.Error{Code: bullpen.EINVALID, Message: "invalid image config", Err: err}
	}
	if cf.OS != "" && cf.OS != "linux" {
		return nil, bullpen.Errorf(bullpen.EINVALID, "image is for %q; only linux images run here", cf.OS)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, &bullpen.Error{Code: bullpen.EINVALID, Message: "cannot read the image layers", Err: err}
	}
	if len(layers) != len(cf.RootFS.DiffIDs) {
		return nil, bullpen.Errorf(bullpen.EINVALID, "image has %d layers but its config lists %d", len(layers), len(cf.RootFS.DiffIDs))
	}
	hexes := make([]string, len(layers))
	for i, d := range cf.RootFS.DiffIDs {
		if d.Algorithm != "sha256" || len(d.Hex) != 64 || !isHex(d.Hex) {
			return nil, bullpen.Errorf(bullpen.EINVALID, "unsupported layer digest %q", d.String())
		}
		hexes[i] = d.Hex
	}
	unpin := s.pin(hexes)
	defer unpin()
	out := &Image{ID: digestOf(raw), Env: cf.Config.Env, WorkDir: cf.Config.WorkingDir}
	if cf.Config.Labels[labelBase] == BaseHost {
		out.Base = BaseHost
	}
	for i, l := range layers {
		d := cf.RootFS.DiffIDs[i]
		if err := s.ensureLayer(ctx, d.Hex, l.Uncompressed); err != nil {
			return nil, fmt.Errorf("image: unpack layer %s: %w", d, err)
		}
		out.Layers = append(out.Layers, d.String())
	}
	return s.record(out, raw, name)
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ensureLayer makes sure layers/<hex> holds the layer that open yields,
// unpacking it once: concurrent callers in this process wait for the one
// unpack, and other processes race safely through temp dir and rename.
func (s *Store) ensureLayer(ctx context.Context, hex string, open func() (io.ReadCloser, error)) error {
	for {
		if _, err := os.Stat(s.layerPath(hex)); err == nil {
			return nil
		}
		s.layerMu.Lock()
		if c, ok := s.layerWG[hex]; ok {
			s.layerMu.Unlock()
			select {
			case <-c.done:
				if c.err == nil {
					return nil
				}
				continue // the other unpack failed (perhaps its ctx ended): try ourselves
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		c := &layerCall{done: make(chan struct{})}
		s.layerWG[hex] = c
		s.layerMu.Unlock()
		c.err = s.unpackLayer(ctx, hex, open)
		s.layerMu.Lock()
		delete(s.layerWG, hex)
		s.layerMu.Unlock()
		close(c.done)
		return c.err
	}
}

func (s *Store) unpackLayer(ctx context.Context, hexd string, open func() (io.ReadCloser, error)) (err error) {
	final := s.layerPath(hexd)
	if _, err := os.Stat(final); err == nil {
		return nil
	}
	s.unpacks.Add(1)
	tmp, err := os.MkdirTemp(filepath.Dir(final), ".tmp-"+hexd[:12]+"-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	rc, err := open()
	if err != nil {
		return err
	}
	defer rc.Close()
	h := sha256.New()
	r := io.TeeReader(ctxReader{ctx, rc}, h)
	if err := unpackTar(r, tmp); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, r); err != nil { // tar padding: part of the digest
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != hexd {
		return &bullpen.Error{Code: bullpen.EINVALID, Message: "layer content does not match its diff id", Err: errDiffID}
	}
	if err := syncFS(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, serr := os.Stat(final); serr == nil { // another process won the race
			os.RemoveAll(tmp)
			return nil
		}
		return err
	}
	return nil
}

// syncFS flushes the filesystem holding dir, so that a layer is durable
// before it becomes visible under its final name.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// asNotFound maps a missing file to ENOTFOUND with msg.
func asNotFound(err error, msg string) error {
	if errors.Is(err, os.ErrNotExist) {
		return bullpen.Errorf(bullpen.ENOTFOUND, "%s", msg)
	}
	return err
}
