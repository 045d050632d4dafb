package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
)

func (s *Server) listImages(c *fiber.Ctx) error {
	imgs, err := s.svc.Sandboxes.Images(c.UserContext(), actor(c))
	if err != nil {
		return err
	}
	return c.JSON(list(imgs))
}

// pullImage fetches {ref} from its registry and names it {name} (default:
// the reference itself).
func (s *Server) pullImage(c *fiber.Ctx) error {
	var in struct {
		Ref  string `json:"ref"`
		Name string `json:"name"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	if in.Ref == "" {
		return bullpen.Errorf(bullpen.EINVALID, "ref is required, e.g. \"registry.example.com/team/tool:1.0\"")
	}
	if in.Name == "" {
		in.Name = in.Ref
	}
	img, err := s.svc.Sandboxes.PullImage(c.UserContext(), actor(c), in.Ref, in.Name)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(img)
}

// importImage imports a docker or OCI image tarball sent as the request
// body (streamed): POST /api/v1/images/import?name=NAME.
func (s *Server) importImage(c *fiber.Ctx) error {
	name, err := pathQuery(c, "name")
	if err != nil {
		return err
	}
	img, err := s.svc.Sandboxes.ImportImage(c.UserContext(), actor(c), requestBody(c), name)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(img)
}

// removeImage deletes the image named by the rest of the path (names may
// hold slashes): DELETE /api/v1/images/team/tool:1.0.
func (s *Server) removeImage(c *fiber.Ctx) error {
	ref, err := url.PathUnescape(c.Params("*"))
	if err != nil || ref == "" {
		return bullpen.Errorf(bullpen.EINVALID, "name the image to remove: DELETE /api/v1/images/NAME")
	}
	if err := s.svc.Sandboxes.RemoveImage(c.UserContext(), actor(c), ref); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

// publishImage shares a member's snapshot with everyone (admins only):
// POST /api/v1/images/alice/tool/publish.
func (s *Server) publishImage(c *fiber.Ctx) error {
	rest, err := url.PathUnescape(c.Params("*"))
	ref, ok := strings.CutSuffix(rest, "/publish")
	if err != nil || !ok || ref == "" {
		return bullpen.Errorf(bullpen.ENOTFOUND, "no such image action: POST /api/v1/images/NAME/publish publishes an image")
	}
	img, err := s.svc.Sandboxes.PublishImage(c.UserContext(), actor(c), ref)
	if err != nil {
		return err
	}
	return c.JSON(img)
}
