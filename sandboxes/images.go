package sandboxes

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox/image"
)

// maxImportBytes bounds an uploaded image tarball.
const maxImportBytes = 16 << 30

func (s *Service) imageStore() (*image.Store, error) {
	if s.images == nil {
		return nil, bullpen.Errorf(bullpen.EUNAVAILABLE, "no image store is configured")
	}
	return s.images, nil
}

// needAdmin refuses members who are not human admins: images are shared by
// every sandbox, and pulling makes the server fetch from the network.
func needAdmin(actor bullpen.Member, what string) error {
	if !seesAll(actor) {
		return bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin may %s", what)
	}
	return nil
}

// Images lists the images actor may use, oldest first: the shared ones,
// actor's own snapshots and published snapshots (admins see all).
func (s *Service) Images(ctx context.Context, actor bullpen.Member) ([]*image.Image, error) {
	st, err := s.imageStore()
	if err != nil {
		return nil, err
	}
	all, err := st.List(ctx)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, img := range all {
		if s.owners.canUse(actor, img) {
			out = append(out, img)
		}
	}
	return out, nil
}

// PullImage fetches ref from its registry and names it name. Admins only.
func (s *Service) PullImage(ctx context.Context, actor bullpen.Member, ref, name string) (*image.Image, error) {
	if err := needAdmin(actor, "pull images"); err != nil {
		return nil, err
	}
	st, err := s.imageStore()
	if err != nil {
		return nil, err
	}
	return st.Pull(ctx, ref, name)
}

// ImportImage imports a docker or OCI image tarball read from r (streamed
// to a temporary file, at most 16 GiB) and names it name. Admins only.
func (s *Service) ImportImage(ctx context.Context, actor bullpen.Member, r io.Reader, name string) (*image.Image, error) {
	if err := needAdmin(actor, "import images"); err != nil {
		return nil, err
	}
	st, err := s.imageStore()
	if err != nil {
		return nil, err
	}
	if err := image.ValidateName(name); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Join(st.Dir(), "tmp"), "upload-*.tar")
	if err != nil {
		return nil, fmt.Errorf("sandboxes: import: %w", err)
	}
	defer os.Remove(f.Name())
	n, err := io.Copy(f, io.LimitReader(r, maxImportBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("sandboxes: import: receive tarball: %w", err)
	case n > maxImportBytes:
		return nil, bullpen.Errorf(bullpen.ETOOLARGE, "image tarball is larger than %d GiB", maxImportBytes>>30)
	case n == 0:
		return nil, bullpen.Errorf(bullpen.EINVALID, "the request body must be an image tarball")
	}
	return st.ImportTarball(ctx, f.Name(), name)
}

// RemoveImage removes an image and the layers no other image uses. Admins
// only; an image that a live sandbox runs on cannot be removed (ECONFLICT).
func (s *Service) RemoveImage(ctx context.Context, actor bullpen.Member, ref string) error {
	if err := needAdmin(actor, "remove images"); err != nil {
		return err
	}
	st, err := s.imageStore()
	if err != nil {
		return err
	}
	img, err := st.Get(ctx, ref)
	if err != nil {
		return err
	}
	live, err := s.m.List(ctx, nil)
	if err != nil {
		return err
	}
	for _, in := range live {
		if used, err := st.Get(ctx, in.Image); err == nil && used.ID == img.ID {
			return bullpen.Errorf(bullpen.ECONFLICT, "image %q is in use by sandbox %s", ref, in.ID)
		}
	}
	return st.Remove(ctx, ref)
}
