package web

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"
	"github.com/gofiber/fiber/v2"
)

// Most API handlers have one shape: read a key from the path and perhaps a
// JSON body, call a service as the acting member, answer with JSON. These
// helpers hold that shape once, so each handler is one call and every error
// goes, unchanged, to the one status table in handleError.

// reply answers v as JSON with status, or hands err to the error handler.
func reply[T any](c *fiber.Ctx, status int, v T, err error) error {
	if err != nil {
		return err
	}
	return c.Status(status).JSON(v)
}

// replyList answers items as {"items": [...]}, never null.
func replyList[T any](c *fiber.Ctx, items []T, err error) error {
	if err != nil {
		return err
	}
	return c.JSON(list(items))
}

// noContent answers 204, or hands err to the error handler.
func noContent(c *fiber.Ctx, err error) error {
	if err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

// keyFunc reads the key a route names (an ID, a slug, a chat ID).
type keyFunc[K any] func(c *fiber.Ctx) (K, error)

// pathID reads the positive integer :id.
func pathID(c *fiber.Ctx) (int64, error) { return idParam(c, "id") }

// pathName reads :id as given (a sandbox's ID or name).
func pathName(c *fiber.Ctx) (string, error) { return c.Params("id"), nil }

// keyed reads the key, calls fn as the actor and answers 200 with its result.
func keyed[K, T any](c *fiber.Ctx, key keyFunc[K], fn func(context.Context, bullpen.Member, K) (T, error)) error {
	k, err := key(c)
	if err != nil {
		return err
	}
	v, err := fn(c.UserContext(), actor(c), k)
	return reply(c, http.StatusOK, v, err)
}

// keyedList is keyed for a call that returns a list.
func keyedList[K, T any](c *fiber.Ctx, key keyFunc[K], fn func(context.Context, bullpen.Member, K) ([]T, error)) error {
	k, err := key(c)
	if err != nil {
		return err
	}
	items, err := fn(c.UserContext(), actor(c), k)
	return replyList(c, items, err)
}

// keyedDo is keyed for a call that returns nothing: it answers 204.
func keyedDo[K any](c *fiber.Ctx, key keyFunc[K], fn func(context.Context, bullpen.Member, K) error) error {
	k, err := key(c)
	if err != nil {
		return err
	}
	return noContent(c, fn(c.UserContext(), actor(c), k))
}

// keyedBody reads the key and the JSON body, calls fn as the actor and
// answers status with its result.
func keyedBody[K, In, T any](c *fiber.Ctx, status int, key keyFunc[K], fn func(context.Context, bullpen.Member, K, In) (T, error)) error {
	k, err := key(c)
	if err != nil {
		return err
	}
	var in In
	if err := decode(c, &in); err != nil {
		return err
	}
	v, err := fn(c.UserContext(), actor(c), k, in)
	return reply(c, status, v, err)
}

// withBody decodes the JSON body, calls fn as the actor and answers status
// (201 for what it creates) with its result.
func withBody[In, T any](c *fiber.Ctx, status int, fn func(context.Context, bullpen.Member, In) (T, error)) error {
	var in In
	if err := decode(c, &in); err != nil {
		return err
	}
	v, err := fn(c.UserContext(), actor(c), in)
	return reply(c, status, v, err)
}

// listed calls fn as the actor and answers its items.
func listed[T any](c *fiber.Ctx, fn func(context.Context, bullpen.Member) ([]T, error)) error {
	items, err := fn(c.UserContext(), actor(c))
	return replyList(c, items, err)
}

// anyone adapts a call that any signed-in member may make, and so takes no
// actor, to the keyed shape.
func anyone[K, T any](fn func(context.Context, K) (T, error)) func(context.Context, bullpen.Member, K) (T, error) {
	return func(ctx context.Context, _ bullpen.Member, k K) (T, error) { return fn(ctx, k) }
}
