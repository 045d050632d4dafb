package web

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web/views"
	"github.com/gofiber/fiber/v2"
)

// OfficeAuth is what the login, session and token handlers call.
type OfficeAuth interface {
	Authenticate(ctx context.Context, secret string) (bullpen.Member, error)
	Login(ctx context.Context, secret string) (bullpen.Member, string, string, error)
	Session(ctx context.Context, cookie string) (bullpen.Member, string, error)
	Logout(ctx context.Context, cookie string) error
	CreateToken(ctx context.Context, actor bullpen.Member, memberID int64, name string) (string, bullpen.Token, error)
	Tokens(ctx context.Context, actor bullpen.Member) ([]bullpen.Token, error)
	RevokeToken(ctx context.Context, actor bullpen.Member, id int64) error
}

// Cookie and header names.
const (
	sessionCookie = "bullpen_session"
	csrfHeader    = "X-CSRF-Token"
	csrfField     = "_csrf"
	// preCSRFCookie carries the login form's CSRF token before a session exists.
	preCSRFCookie = "bullpen_login_csrf"
)

// Fiber locals set by the auth middleware.
const (
	localMember   = "member"
	localCSRF     = "csrf"
	localByCookie = "by_cookie"
)

// actor returns the authenticated member of the request.
func actor(c *fiber.Ctx) bullpen.Member {
	m, _ := c.Locals(localMember).(bullpen.Member)
	return m
}

// source tells which surface a request came through.
func source(c *fiber.Ctx) string {
	if by, _ := c.Locals(localByCookie).(bool); by {
		return bullpen.SourceWeb
	}
	return bullpen.SourceAPI
}

// authenticate accepts a Bearer token or a session cookie. Requests that
// ride on the cookie and change state must carry the session's CSRF token.
// Failed attempts count against the client's address (see gate).
func (s *Server) authenticate(c *fiber.Ctx) error {
	if h := c.Get(fiber.HeaderAuthorization); h != "" {
		return s.byBearer(c, h)
	}
	cookie := c.Cookies(sessionCookie)
	if cookie == "" {
		return bullpen.Errorf(bullpen.EUNAUTHORIZED, "log in, or send an Authorization: Bearer token")
	}
	if err := s.bySession(c, cookie); err != nil {
		return err
	}
	if changesState(c.Method()) {
		got := c.Get(csrfHeader)
		if got == "" {
			got = c.FormValue(csrfField)
		}
		if err := bullpen.CheckCSRF(csrfOf(c), got); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) byBearer(c *fiber.Ctx, header string) error {
	tok, ok := strings.CutPrefix(header, "Bearer ")
	tok = strings.TrimSpace(tok)
	done, err := s.gate(c, tok)
	if err != nil {
		return err
	}
	if !ok {
		return done(bullpen.Errorf(bullpen.EUNAUTHORIZED, "Authorization must be \"Bearer <token>\""))
	}
	m, err := s.off.Authenticate(c.UserContext(), tok)
	if err := done(err); err != nil {
		return err
	}
	s.known.add(tok)
	c.Locals(localMember, m)
	return nil
}

func (s *Server) bySession(c *fiber.Ctx, cookie string) error {
	done, err := s.gate(c, cookie)
	if err != nil {
		return err
	}
	m, csrf, err := s.off.Session(c.UserContext(), cookie)
	if err := done(err); err != nil {
		if bullpen.IsCode(err, bullpen.EUNAUTHORIZED) {
			c.ClearCookie(sessionCookie) // so that a stale cookie is not counted again
		}
		return err
	}
	s.known.add(cookie)
	c.Locals(localMember, m)
	c.Locals(localCSRF, csrf)
	c.Locals(localByCookie, true)
	return nil
}

// gate guards one authentication attempt. A credential that worked
// recently is checked as usual, so its owner keeps working while someone
// at the same address is limited. Any other attempt takes one of the
// address's attempts first, atomically, so parallel guesses cannot
// overshoot; an address without one gets 429 and Retry-After, and its
// guess is not looked up. Concurrent attempts with the same unseen
// credential share one attempt (authFlights). The returned done settles
// the attempt with the result: a failure keeps the attempt taken,
// anything else gives it back, and a success makes the credential known.
func (s *Server) gate(c *fiber.Ctx, secret string) (done func(error) error, err error) {
	if s.fails == nil {
		return func(err error) error { return err }, nil
	}
	key := s.clientKey(c)
	var deadline <-chan time.Time // made at the first wait: the known path needs no timer
	for {
		if secret != "" && s.known.has(secret) {
			return func(err error) error {
				if bullpen.IsCode(err, bullpen.EUNAUTHORIZED) {
					s.fails.fail(key) // it worked once, and was revoked or expired since
				}
				return err
			}, nil
		}
		lead, settled, finish := s.flights.join(secret)
		if lead {
			return s.take(c, key, secret, finish)
		}
		if deadline == nil {
			deadline = time.After(flightWait)
		}
		select {
		case <-settled: // known now, or the next leader's turn
		case <-deadline:
			return s.take(c, key, secret, func() {})
		case <-c.UserContext().Done():
			return nil, c.UserContext().Err()
		}
	}
}

// take takes one of key's attempts for an attempt with secret, and
// returns its done (see gate), which calls finish last.
func (s *Server) take(c *fiber.Ctx, key, secret string, finish func()) (done func(error) error, err error) {
	if ok, wait := s.fails.take(key); !ok {
		finish()
		secs := max(1, int(math.Ceil(wait.Seconds())))
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
		return nil, bullpen.Errorf(bullpen.ERATELIMIT, "too many failed authentication attempts from your address; try again in %d s", secs)
	}
	return func(err error) error {
		if !bullpen.IsCode(err, bullpen.EUNAUTHORIZED) {
			s.fails.refund(key)
		}
		if err == nil && secret != "" {
			s.known.add(secret)
		}
		finish()
		return err
	}, nil
}

// clientKey is the address the request's failures count under.
func (s *Server) clientKey(c *fiber.Ctx) string {
	return s.proxies.client(c.Context().RemoteIP(), c.Get(fiber.HeaderXForwardedFor))
}

func changesState(method string) bool {
	switch method {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return false
	}
	return true
}

func (s *Server) authAPI(c *fiber.Ctx) error {
	if err := s.authenticate(c); err != nil {
		return err
	}
	return c.Next()
}

func (s *Server) authPage(c *fiber.Ctx) error {
	if err := s.authenticate(c); err != nil {
		if bullpen.IsCode(err, bullpen.EUNAUTHORIZED) {
			return c.Redirect("/login?next="+url.QueryEscape(c.OriginalURL()), http.StatusSeeOther)
		}
		return err
	}
	return c.Next()
}

func (s *Server) loginPage(c *fiber.Ctx) error {
	return s.renderLogin(c, "")
}

func (s *Server) renderLogin(c *fiber.Ctx, msg string) error {
	csrf := c.Cookies(preCSRFCookie)
	if csrf == "" {
		csrf = strings.TrimPrefix(newNonce(), bullpen.TokenPrefix)
		c.Cookie(&fiber.Cookie{Name: preCSRFCookie, Value: csrf, Path: "/login", HTTPOnly: true,
			SameSite: fiber.CookieSameSiteStrictMode, Secure: s.cfg.SecureCookies, Expires: time.Now().Add(time.Hour)})
	}
	return render(c, views.Login(views.LoginPage{Error: msg, CSRF: csrf, Next: safeNext(c.Query("next"))}))
}

// login exchanges a token for a session cookie. The form carries a CSRF
// token bound to a short-lived cookie (double submit), so no other site
// can log a browser in. Bad tokens count as failed attempts.
func (s *Server) login(c *fiber.Ctx) error {
	want := c.Cookies(preCSRFCookie)
	if err := bullpen.CheckCSRF(want, c.FormValue(csrfField)); err != nil {
		c.Status(http.StatusForbidden)
		return s.renderLogin(c, bullpen.ErrorMessage(err))
	}
	secret := strings.TrimSpace(c.FormValue("token"))
	done, err := s.gate(c, secret)
	if err != nil {
		c.Status(http.StatusTooManyRequests)
		return s.renderLogin(c, bullpen.ErrorMessage(err))
	}
	_, cookie, _, err := s.off.Login(c.UserContext(), secret)
	if err := done(err); err != nil {
		c.Status(statusOf(bullpen.ErrorCode(err)))
		if bullpen.IsCode(err, bullpen.EUNAUTHORIZED) {
			return s.renderLogin(c, "That token is not valid.")
		}
		return s.renderLogin(c, bullpen.ErrorMessage(err))
	}
	s.known.add(secret)
	s.known.add(cookie)
	c.Cookie(&fiber.Cookie{Name: sessionCookie, Value: cookie, Path: "/", HTTPOnly: true,
		SameSite: fiber.CookieSameSiteLaxMode, Secure: s.cfg.SecureCookies, Expires: time.Now().Add(bullpen.SessionTTL)})
	c.ClearCookie(preCSRFCookie)
	return c.Redirect(safeNext(c.FormValue("next")), http.StatusSeeOther)
}

func (s *Server) logout(c *fiber.Ctx) error {
	if err := s.off.Logout(c.UserContext(), c.Cookies(sessionCookie)); err != nil {
		return err
	}
	c.ClearCookie(sessionCookie)
	return c.Redirect("/login", http.StatusSeeOther)
}

// safeNext keeps post-login redirects on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}
