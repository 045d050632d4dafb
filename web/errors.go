package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web/views"
	"github.com/gofiber/fiber/v2"
)

// statusOf maps an error code to its HTTP status. This is the only place
// where that mapping lives.
func statusOf(code string) int {
	switch code {
	case bullpen.EINVALID:
		return http.StatusBadRequest
	case bullpen.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case bullpen.EFORBIDDEN:
		return http.StatusForbidden
	case bullpen.ENOTFOUND:
		return http.StatusNotFound
	case bullpen.ECONFLICT:
		return http.StatusConflict
	case bullpen.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case bullpen.ERATELIMIT:
		return http.StatusTooManyRequests
	case bullpen.EUNSUPPORTED:
		return http.StatusNotImplemented
	case bullpen.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// codeOfStatus maps Fiber's own errors (body too large, bad method) to codes.
func codeOfStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return bullpen.EINVALID
	case http.StatusUnauthorized:
		return bullpen.EUNAUTHORIZED
	case http.StatusForbidden:
		return bullpen.EFORBIDDEN
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return bullpen.ENOTFOUND
	case http.StatusRequestEntityTooLarge, http.StatusRequestHeaderFieldsTooLarge, http.StatusRequestURITooLong:
		return bullpen.ETOOLARGE
	case http.StatusTooManyRequests:
		return bullpen.ERATELIMIT
	case http.StatusUpgradeRequired:
		return bullpen.EINVALID
	}
	return bullpen.EINTERNAL
}

// errorBody is the one error shape of the API.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// handleError renders every error: JSON under /api, an HTML page elsewhere.
// Only internal errors are logged.
func (s *Server) handleError(c *fiber.Ctx, err error) error {
	code, msg := bullpen.ErrorCode(err), bullpen.ErrorMessage(err)
	var fe *fiber.Error
	if errors.As(err, &fe) && fe.Code == http.StatusRequestTimeout {
		return c.SendStatus(fe.Code) // an idle keep-alive connection timed out
	}
	if errors.As(err, &fe) {
		code, msg = codeOfStatus(fe.Code), fe.Message
		if fe.Code == http.StatusRequestEntityTooLarge {
			msg = "request body is too large"
		}
	}
	status := statusOf(code)
	if code == bullpen.EINTERNAL {
		s.log.Error("internal error", "method", c.Method(), "path", c.Path(), "err", err)
	}
	if strings.HasPrefix(c.Path(), "/api/") || strings.HasPrefix(c.Path(), "/healthz") {
		var body errorBody
		body.Error.Code, body.Error.Message = code, msg
		return c.Status(status).JSON(body)
	}
	if status == http.StatusUnauthorized {
		return c.Redirect("/login?next="+url.QueryEscape(c.OriginalURL()), http.StatusSeeOther)
	}
	c.Status(status)
	return render(c, views.Error(views.ErrorPage{Status: status, Code: code, Message: msg}))
}
