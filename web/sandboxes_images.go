package web

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox/image"
	"github.com/gofiber/fiber/v2"
)

// SandboxImages is what the image handlers call.
type SandboxImages interface {
	Images(ctx context.Context, actor bullpen.Member) ([]*image.Image, error)
	PublishImage(ctx context.Context, actor bullpen.Member, ref string) (*image.Image, error)
	PullImage(ctx context.Context, actor bullpen.Member, ref, name string) (*image.Image, error)
	ImportImage(ctx context.Context, actor bullpen.Member, r io.Reader, name string) (*image.Image, error)
	RemoveImage(ctx context.Context, actor bullpen.Member, ref string) error
}

func (s *Server) listImages(c *fiber.Ctx) error { return listed(c, s.sb.images.Images) }

// pullIn is the body of a pull.
type pullIn struct {
	Ref  string `json:"ref"`
	Name string `json:"name"`
}

// pullImage fetches {ref} from its registry and names it {name} (default:
// the reference itself).
func (s *Server) pullImage(c *fiber.Ctx) error {
	return withBody(c, http.StatusCreated, func(ctx context.Context, me bullpen.Member, in pullIn) (*image.Image, error) {
		if in.Ref == "" {
			return nil, bullpen.Errorf(bullpen.EINVALID, "ref is required, e.g. \"registry.example.com/team/tool:1.0\"")
		}
		if in.Name == "" {
			in.Name = in.Ref
		}
		return s.sb.images.PullImage(ctx, me, in.Ref, in.Name)
	})
}

// importImage imports a docker or OCI image tarball sent as the request
// body (streamed): POST /api/v1/images/import?name=NAME.
func (s *Server) importImage(c *fiber.Ctx) error {
	name, err := pathQuery(c, "name")
	if err != nil {
		return err
	}
	img, err := s.sb.images.ImportImage(c.UserContext(), actor(c), requestBody(c), name)
	return reply(c, http.StatusCreated, img, err)
}

// imageRef reads the image named by the rest of the path (names may hold
// slashes).
func imageRef(c *fiber.Ctx) (string, error) {
	ref, err := url.PathUnescape(c.Params("*"))
	if err != nil || ref == "" {
		return "", bullpen.Errorf(bullpen.EINVALID, "name the image to remove: DELETE /api/v1/images/NAME")
	}
	return ref, nil
}

// removeImage deletes an image: DELETE /api/v1/images/team/tool:1.0.
func (s *Server) removeImage(c *fiber.Ctx) error {
	return keyedDo(c, imageRef, s.sb.images.RemoveImage)
}

// publishRef reads the image of POST /api/v1/images/NAME/publish.
func publishRef(c *fiber.Ctx) (string, error) {
	rest, err := url.PathUnescape(c.Params("*"))
	ref, ok := strings.CutSuffix(rest, "/publish")
	if err != nil || !ok || ref == "" {
		return "", bullpen.Errorf(bullpen.ENOTFOUND, "no such image action: POST /api/v1/images/NAME/publish publishes an image")
	}
	return ref, nil
}

// publishImage shares a member's snapshot with everyone (admins only):
// POST /api/v1/images/alice/tool/publish.
func (s *Server) publishImage(c *fiber.Ctx) error {
	return keyed(c, publishRef, s.sb.images.PublishImage)
}
