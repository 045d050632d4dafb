package web

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/jsonutf8"
	"github.com/gofiber/fiber/v2"
)

// maxJSONBody bounds JSON request bodies on the API.
const maxJSONBody = 256 << 10

// decode parses the JSON body strictly into v: one object, no unknown
// fields, every string valid UTF-8, within maxJSONBody. Every handler that
// reads JSON goes through here.
func decode(c *fiber.Ctx, v any) error {
	body := c.Body()
	if len(body) > maxJSONBody {
		return bullpen.Errorf(bullpen.ETOOLARGE, "request body is larger than %d KiB", maxJSONBody>>10)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return bullpen.Errorf(bullpen.EINVALID, "request body must be a JSON object")
	}
	if err := jsonutf8.Check(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bullpen.Errorf(bullpen.EINVALID, "%s", jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bullpen.Errorf(bullpen.EINVALID, "malformed JSON: unexpected data after the object")
	}
	return nil
}

// jsonProblem describes a decoding error without echoing Go type names.
// Only what is not JSON is called malformed: a wrong type, an unknown
// field or a bad value (a size, a duration, a network policy) is named
// as what it is.
func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return fmt.Sprintf("field %q has the wrong type", typeErr.Field)
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("malformed JSON: syntax error at byte %d", syntaxErr.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "malformed JSON: the body ends too early"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	case strings.HasPrefix(err.Error(), "json: "):
		return "malformed JSON: " + strings.TrimPrefix(err.Error(), "json: ")
	}
	return "invalid value: " + err.Error()
}

// idParam parses a positive integer path parameter.
func idParam(c *fiber.Ctx, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Params(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, bullpen.Errorf(bullpen.EINVALID, "%s must be a positive integer", name)
	}
	return id, nil
}

// intQuery parses an optional integer query parameter.
func intQuery(c *fiber.Ctx, name string, def int64) (int64, error) {
	v := c.Query(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, bullpen.Errorf(bullpen.EINVALID, "query parameter %s must be an integer", name)
	}
	return n, nil
}

// rangeQuery reads an integer query parameter that must lie in [lo, hi];
// the error names the parameter.
func rangeQuery(c *fiber.Ctx, name string, def, lo, hi int64) (int64, error) {
	n, err := intQuery(c, name, def)
	if err != nil {
		return 0, err
	}
	if n < lo || n > hi {
		return 0, bullpen.Errorf(bullpen.EINVALID, "query parameter %s must be between %d and %d, not %d", name, lo, hi, n)
	}
	return n, nil
}

// maxTurnsPage is the most turns one page of an agent's turns holds.
const maxTurnsPage = 200

// list wraps items as {"items": [...]}, never null.
func list[T any](items []T) fiber.Map {
	if items == nil {
		items = []T{}
	}
	return fiber.Map{"items": items}
}

func newNonce() string {
	b := make([]byte, 20)
	rand.Read(b)
	return hex.EncodeToString(b)
}
