package web

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web/views"
	"github.com/gofiber/fiber/v2"
)

// Settings is what the settings routes need of the provider settings;
// *settings.Service implements it. Every method is for admins
// (EFORBIDDEN otherwise). Providers carry only hints of their secrets.
type Settings interface {
	Providers(ctx context.Context, actor bullpen.Member) ([]bullpen.Provider, error)
	Get(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Provider, error)
	Create(ctx context.Context, actor bullpen.Member, in bullpen.ProviderInput) (bullpen.Provider, error)
	Update(ctx context.Context, actor bullpen.Member, id int64, in bullpen.ProviderInput) (bullpen.Provider, error)
	Delete(ctx context.Context, actor bullpen.Member, id int64) error
	// Test makes a real request to the provider; a failure is a result.
	Test(ctx context.Context, actor bullpen.Member, id int64) (bullpen.ProviderTest, error)
}

// settingsRoutes registers /api/v1/settings.
func (s *Server) settingsRoutes(api fiber.Router) {
	g := api.Group("/settings", s.needSettings)
	g.Get("/providers", s.listProviders)
	g.Post("/providers", s.createProvider)
	g.Get("/providers/:id", s.getProvider)
	g.Patch("/providers/:id", s.updateProvider)
	g.Delete("/providers/:id", s.deleteProvider)
	g.Post("/providers/:id/test", s.testProvider)
}

// needSettings answers 403 to non-admins before anything else, so a
// member learns nothing of the settings, and 503 when the server has none.
func (s *Server) needSettings(c *fiber.Ctx) error {
	if !actor(c).IsAdmin {
		return bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can see or change the settings")
	}
	if s.svc.Settings == nil {
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "settings are not part of this server")
	}
	return c.Next()
}

func (s *Server) listProviders(c *fiber.Ctx) error { return listed(c, s.svc.Settings.Providers) }

func (s *Server) createProvider(c *fiber.Ctx) error {
	return withBody(c, http.StatusCreated, s.svc.Settings.Create)
}

func (s *Server) getProvider(c *fiber.Ctx) error { return keyed(c, pathID, s.svc.Settings.Get) }

func (s *Server) updateProvider(c *fiber.Ctx) error {
	return keyedBody(c, http.StatusOK, pathID, s.svc.Settings.Update)
}

func (s *Server) deleteProvider(c *fiber.Ctx) error {
	return keyedDo(c, pathID, s.svc.Settings.Delete)
}

func (s *Server) testProvider(c *fiber.Ctx) error { return keyed(c, pathID, s.svc.Settings.Test) }

// providerNotice is the dashboard's banner about model providers, as of
// now: Config.Notice when set, else the fixed Config.ProviderNotice.
func (s *Server) providerNotice(ctx context.Context) string {
	if s.cfg.Notice != nil {
		return s.cfg.Notice(ctx)
	}
	return s.cfg.ProviderNotice
}

// settingsPage renders the Settings page (admins): model providers and
// every token. static/settings.js drives its forms through the API.
func (s *Server) settingsPage(c *fiber.Ctx) error {
	me, ctx := actor(c), c.UserContext()
	if !me.IsAdmin {
		return bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can see the settings")
	}
	p := views.SettingsPage{Office: s.cfg.OfficeName, CSRF: csrfOf(c), Me: me.ID, Notice: s.providerNotice(ctx)}
	if s.svc.Settings != nil {
		ps, err := s.svc.Settings.Providers(ctx, me)
		if err != nil {
			return err
		}
		for _, pr := range ps {
			p.Providers = append(p.Providers, views.ProviderItem{ID: pr.ID, Name: pr.Name, Kind: pr.Kind, BaseURL: pr.BaseURL,
				Model: pr.Model, IsDefault: pr.IsDefault, FromEnv: pr.Source == bullpen.ProviderFromEnv,
				KeyHint: pr.APIKeyHint, OAuthHint: pr.OAuthTokenHint, EmbeddingsModel: pr.EmbeddingsModel})
		}
	}
	tokens, err := s.off.AllTokens(ctx, me)
	if err != nil {
		return err
	}
	if p.Members, err = s.tokenMembers(ctx, me); err != nil {
		return err
	}
	if s.sb.settings != nil {
		set, err := s.sb.settings.Settings(ctx, me)
		if err != nil {
			return err
		}
		p.Sandboxes = &views.SandboxSettingsItem{PullOnCreate: set.PullOnCreate}
	}
	for _, t := range tokens {
		p.Tokens = append(p.Tokens, views.TokenItem{ID: t.ID, Handle: t.Handle, Kind: string(t.MemberKind), Name: t.Name,
			Hint: t.Hint, CreatedAt: t.CreatedAt, LastUsedAt: t.LastUsedAt, RevokedAt: t.RevokedAt})
	}
	return render(c, views.Settings(p))
}

// tokenMembers lists who a new token may be for: the admin first, then
// the other members.
func (s *Server) tokenMembers(ctx context.Context, me bullpen.Member) ([]views.TokenMember, error) {
	ms, err := s.off.Members(ctx)
	if err != nil {
		return nil, err
	}
	out := []views.TokenMember{{ID: me.ID, Handle: me.Handle, Kind: string(me.Kind)}}
	for _, m := range ms {
		if m.ID != me.ID {
			out = append(out, views.TokenMember{ID: m.ID, Handle: m.Handle, Kind: string(m.Kind)})
		}
	}
	return out, nil
}
