package image

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// minPrefix is the shortest id prefix that Get and Resolve accept.
const minPrefix = 12

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}

// ValidateName reports whether name may name an image: 1 to 255 characters
// from [A-Za-z0-9._:/@+-], starting with a letter or digit, not "host", and
// not something that reads as an image id or id prefix.
func ValidateName(name string) error {
	if name == "" || len(name) > 255 {
		return bullpen.Errorf(bullpen.EINVALID, "image name must be 1 to 255 characters")
	}
	for i, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if i > 0 && strings.ContainsRune("._:/@+-", c) {
			ok = true
		}
		if !ok {
			return bullpen.Errorf(bullpen.EINVALID, "image name %q: invalid character %q", name, c)
		}
	}
	switch {
	case name == BaseHost:
		return bullpen.Errorf(bullpen.EINVALID, "image name %q is reserved", name)
	case strings.HasPrefix(name, "sha256:"), len(name) >= minPrefix && isHex(name):
		return bullpen.Errorf(bullpen.EINVALID, "image name %q looks like an image id", name)
	}
	return nil
}

// resolve maps a name, a full id or a unique id prefix to an id hex.
func (s *Store) resolve(ref string) (string, error) {
	if ref == "" {
		return "", bullpen.Errorf(bullpen.EINVALID, "empty image reference")
	}
	names, err := s.readNames()
	if err != nil {
		return "", err
	}
	if id, ok := names[ref]; ok {
		return strings.TrimPrefix(id, "sha256:"), nil
	}
	hex := strings.TrimPrefix(ref, "sha256:")
	if len(hex) < minPrefix || len(hex) > 64 || !isHex(hex) {
		return "", bullpen.Errorf(bullpen.ENOTFOUND, "image %q not found", ref)
	}
	if len(hex) == 64 {
		if _, err := os.Stat(s.imagePath(hex)); err != nil {
			return "", bullpen.Errorf(bullpen.ENOTFOUND, "image %q not found", ref)
		}
		return hex, nil
	}
	ids, err := s.ids()
	if err != nil {
		return "", err
	}
	var match []string
	for _, id := range ids {
		if strings.HasPrefix(id, hex) {
			match = append(match, id)
		}
	}
	switch len(match) {
	case 0:
		return "", bullpen.Errorf(bullpen.ENOTFOUND, "image %q not found", ref)
	case 1:
		return match[0], nil
	}
	return "", bullpen.Errorf(bullpen.EINVALID, "image id prefix %q is ambiguous", ref)
}

// ids lists the id hexes of all images, sorted.
func (s *Store) ids() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, "images"))
	if err != nil {
		return nil, fmt.Errorf("image: list: %w", err)
	}
	var ids []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok && len(n) == 64 && isHex(n) {
			ids = append(ids, n)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// namesOf returns the names in the index that point at id, sorted.
func namesOf(names map[string]string, id string) []string {
	var out []string
	for n, v := range names {
		if v == id {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Get returns the manifest of the image that ref (a name, a full id, or a
// unique id prefix of at least 12 hex digits) points at.
func (s *Store) Get(ctx context.Context, ref string) (*Image, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	hex, err := s.resolve(ref)
	if err != nil {
		return nil, err
	}
	img, err := s.readImage(hex)
	if os.IsNotExist(err) {
		return nil, bullpen.Errorf(bullpen.ENOTFOUND, "image %q not found", ref)
	} else if err != nil {
		return nil, fmt.Errorf("image: get %s: %w", ref, err)
	}
	names, err := s.readNames()
	if err != nil {
		return nil, err
	}
	img.Names = namesOf(names, img.ID)
	return img, nil
}

// List returns the manifests of all images, oldest first.
func (s *Store) List(ctx context.Context) ([]*Image, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	names, err := s.readNames()
	if err != nil {
		return nil, err
	}
	out := make([]*Image, 0, len(ids))
	for _, hex := range ids {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		img, err := s.readImage(hex)
		if os.IsNotExist(err) {
			continue // removed since ids() listed it
		} else if err != nil {
			return nil, fmt.Errorf("image: list: %w", err)
		}
		img.Names = namesOf(names, img.ID)
		out = append(out, img)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

// Resolve returns the image's layer directories, lowest first (absolute,
// read-only, shared by all sandboxes), its config env ("K=V") and working
// directory. For an image whose Base is BaseHost the layers go on top of the
// runtime's host-tools base; call Base to find out.
func (s *Store) Resolve(ctx context.Context, ref string) (layers []string, env []string, workdir string, err error) {
	img, err := s.Get(ctx, ref)
	if err != nil {
		return nil, nil, "", err
	}
	for _, d := range img.Layers {
		p := s.layerPath(strings.TrimPrefix(d, "sha256:"))
		if _, err := os.Stat(p); err != nil {
			return nil, nil, "", fmt.Errorf("image: resolve %s: layer %s: %w", ref, d, err)
		}
		layers = append(layers, p)
	}
	return layers, img.Env, img.WorkDir, nil
}

// Base returns BaseHost if the image sits on the runtime's host-tools base
// (it was committed from a sandbox started from "host", directly or through
// other such images), and "" if its layers are its whole root filesystem.
func (s *Store) Base(ctx context.Context, ref string) (string, error) {
	img, err := s.Get(ctx, ref)
	if err != nil {
		return "", err
	}
	return img.Base, nil
}

// record stores a new image's config blob and manifest and points name at
// it (moving the name off any other image). It returns the stored manifest.
func (s *Store) record(img *Image, config []byte, name string) (*Image, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	for _, d := range img.Layers { // a GC in another process may have raced us
		if _, err := os.Stat(s.layerPath(strings.TrimPrefix(d, "sha256:"))); err != nil {
			return nil, fmt.Errorf("image: record %s: layer %s: %w", img.ID, d, err)
		}
	}
	hex := strings.TrimPrefix(img.ID, "sha256:")
	if _, err := os.Stat(s.blobPath(hex)); os.IsNotExist(err) {
		if err := writeFileAtomic(s.blobPath(hex), config); err != nil {
			return nil, fmt.Errorf("image: write config %s: %w", img.ID, err)
		}
	}
	if old, err := s.readImage(hex); err == nil {
		img.Created = old.Created // same content: keep its age
	} else if img.Created.IsZero() {
		img.Created = time.Now().UTC()
	}
	names, err := s.readNames()
	if err != nil {
		return nil, err
	}
	prev, moved := names[name]
	names[name] = img.ID
	img.Names = namesOf(names, img.ID)
	if err := writeJSON(s.imagePath(hex), img); err != nil {
		return nil, fmt.Errorf("image: write manifest %s: %w", img.ID, err)
	}
	if err := s.writeNames(names); err != nil {
		return nil, err
	}
	if moved && prev != img.ID {
		phex := strings.TrimPrefix(prev, "sha256:")
		if old, err := s.readImage(phex); err == nil {
			old.Names = namesOf(names, prev)
			if err := writeJSON(s.imagePath(phex), old); err != nil {
				return nil, fmt.Errorf("image: write manifest %s: %w", prev, err)
			}
		}
	}
	return img, nil
}
