package web

import (
	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web/openapi"
	"github.com/gofiber/fiber/v2"
)

// openapiDoc serves the API's OpenAPI document, fragments merged. It needs
// no credential: clients and generators read it before they have one.
func (s *Server) openapiDoc(c *fiber.Ctx) error {
	doc, err := openapi.JSON()
	if err != nil {
		return bullpen.Errorf(bullpen.EINTERNAL, "the API description does not load: %v", err)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	return c.Send(doc)
}
