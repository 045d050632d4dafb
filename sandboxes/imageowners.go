package sandboxes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox/image"
)

// imageOwner is who made a snapshot image and whether it is shared.
type imageOwner struct {
	Owner     int64 `json:"owner"`
	Published bool  `json:"published,omitempty"`
}

// imageOwners records the owners of snapshot images, by image id, in a
// JSON file beside the sandboxes' state. Images without an entry (pulled
// or imported by an admin) are shared by everyone.
type imageOwners struct {
	mu   sync.Mutex
	path string
	byID map[string]imageOwner
}

func openImageOwners(path string) (*imageOwners, error) {
	o := &imageOwners{path: path, byID: map[string]imageOwner{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return o, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &o.byID)
	}
	if err != nil {
		return nil, fmt.Errorf("sandboxes: image owners: %w", err)
	}
	return o, nil
}

// get returns an image's entry and whether it has one.
func (o *imageOwners) get(id string) (imageOwner, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.byID[id]
	return e, ok
}

// set records an entry and writes the file (atomically, by rename).
func (o *imageOwners) set(id string, e imageOwner) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.byID[id] = e
	b, err := json.Marshal(o.byID)
	if err != nil {
		return fmt.Errorf("sandboxes: image owners: %w", err)
	}
	tmp := o.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("sandboxes: image owners: %w", err)
	}
	if err := os.Rename(tmp, o.path); err != nil {
		return fmt.Errorf("sandboxes: image owners: %w", err)
	}
	return nil
}

// canUse reports whether actor may see and run an image: shared ones
// everybody, a snapshot its owner and admins until an admin publishes it.
func (o *imageOwners) canUse(actor bullpen.Member, img *image.Image) bool {
	e, ok := o.get(img.ID)
	return !ok || e.Published || seesAll(actor) || (actor.ID != 0 && e.Owner == actor.ID)
}

// snapshotName is the name a snapshot of actor's gets: a member's images
// are named "handle/…" (added when missing), so none can shadow a shared
// image; admins name shared images as they like.
func snapshotName(actor bullpen.Member, name string) (string, error) {
	if seesAll(actor) {
		return name, nil
	}
	prefix := actor.Handle + "/"
	if strings.HasPrefix(name, prefix) {
		return name, nil
	}
	if strings.Contains(name, "/") {
		return "", bullpen.Errorf(bullpen.EFORBIDDEN, "your images are named %s…; %q is not", prefix, name)
	}
	return prefix + name, nil
}

// checkImage refuses a spec image that the actor may not use, as not
// found so a private image's existence does not leak.
func (s *Service) checkImage(ctx context.Context, actor bullpen.Member, ref string) error {
	if s.images == nil || ref == "" || ref == image.BaseHost {
		return nil
	}
	img, err := s.images.Get(ctx, ref)
	if err != nil {
		return nil // the runtime reports unknown images itself
	}
	if !s.owners.canUse(actor, img) {
		return bullpen.Errorf(bullpen.ENOTFOUND, "image %q not found", ref)
	}
	return nil
}

// PublishImage shares a snapshot image with every member. Admins only.
func (s *Service) PublishImage(ctx context.Context, actor bullpen.Member, ref string) (*image.Image, error) {
	if err := needAdmin(actor, "publish images"); err != nil {
		return nil, err
	}
	st, err := s.imageStore()
	if err != nil {
		return nil, err
	}
	img, err := st.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	e, ok := s.owners.get(img.ID)
	if !ok || e.Published {
		return img, nil // shared already
	}
	e.Published = true
	return img, s.owners.set(img.ID, e)
}

// ownersPath is where the image owners file lives.
func ownersPath(cfg Config) string { return filepath.Join(cfg.Sandbox.StateDir, "image-owners.json") }
