package agents

import (
	"context"
	"fmt"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// ProviderSource gives a turn its model provider when the turn starts, so
// that a change of settings applies from the next turn without a restart.
// *settings.Service implements it.
type ProviderSource interface {
	// Provider returns the provider named name ("" is the office default)
	// and the name it resolved to. With none set up the error is
	// ENOTFOUND, and the name is the one the turn would use ("" when the
	// office has no default).
	Provider(ctx context.Context, name string) (llm.Provider, string, error)
}

// staticProviders is the ProviderSource of a fixed map: Config.Providers
// (tests, the demo's simulation).
type staticProviders struct {
	ps  map[string]llm.Provider
	def string
}

func (s staticProviders) Provider(_ context.Context, name string) (llm.Provider, string, error) {
	if name == "" {
		name = s.def
	}
	if p := s.ps[name]; p != nil {
		return p, name, nil
	}
	return nil, name, bullpen.Errorf(bullpen.ENOTFOUND, "no provider named %q", name)
}

// providers is the source turns use: Config.ProviderSource, else the
// fixed Config.Providers.
func providersOf(cfg Config) ProviderSource {
	if cfg.ProviderSource != nil {
		return cfg.ProviderSource
	}
	return staticProviders{ps: cfg.Providers, def: cfg.DefaultProvider}
}

// providerSet answers whether the office can think: the notice the
// dashboard shows when it cannot, and whether a provider name an agent
// edit gives is set up.
type providerSet struct {
	src        ProviderSource
	simulation bool // bullpen demo: the scripted provider stands in
}

// pickProvider sets the turn's provider. With none set up it posts a
// notice (once) naming the provider the agent would use and where an
// admin sets it up, and returns false.
func (s *turnLoop) pickProvider(ctx context.Context, e *turnEnv) (bool, error) {
	p, name, err := s.providerSet.src.Provider(ctx, e.role.Provider)
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		s.noticeOnce(ctx, e, "np", noProviderText(e.agent.Handle, e.role.Provider, name))
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("agents: model provider: %w", err)
	}
	e.provider, e.kind = p, name
	return true, nil
}

// noProviderText says, without jargon, why an agent cannot answer.
func noProviderText(handle, asked, resolved string) string {
	switch {
	case asked != "":
		return fmt.Sprintf("@%s cannot answer: its model provider %q is not set up. An admin can add it in Settings → Providers, or pick another provider for @%s in Agents → Edit.", handle, asked, handle)
	case resolved != "":
		return fmt.Sprintf("@%s cannot answer: the office's default model provider %q is not set up. An admin can add it in Settings → Providers.", handle, resolved)
	}
	return fmt.Sprintf("@%s cannot answer: no model provider is set up (it uses the office default, and there is none yet). An admin can add one in Settings → Providers.", handle)
}

// Notice says what the dashboard should show about model providers, now:
// "" when the office has a default provider.
func (ps providerSet) Notice(ctx context.Context) string {
	if ps.simulation {
		return "Simulation: agents run on a scripted model, not a real one. Try asking @lead to run the tests, check a deploy or write something up on the wiki."
	}
	if _, _, err := ps.src.Provider(ctx, ""); bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return "No default model provider is set up: agents cannot think. An admin can add one in Settings → Providers (or set BULLPEN_OPENAI_API_KEY or BULLPEN_ANTHROPIC_API_KEY)."
	}
	return ""
}

// HasProvider tells whether agents have a default model provider to
// think with (the simulation counts as one).
func (ps providerSet) HasProvider(ctx context.Context) bool {
	if ps.simulation {
		return true
	}
	_, _, err := ps.src.Provider(ctx, "")
	return err == nil
}

// ProviderNotice is Notice at this moment.
func (ps providerSet) ProviderNotice() string { return ps.Notice(context.Background()) }

// checkProviderName refuses an agent edit naming a provider that is not
// set up, so that the mistake shows in the form rather than as a notice
// on the agent's next turn.
func (ps providerSet) checkProviderName(ctx context.Context, name string) error {
	if name == "" || name == "scripted" && ps.simulation {
		return nil
	}
	if _, _, err := ps.src.Provider(ctx, name); bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return bullpen.Errorf(bullpen.EINVALID, "no model provider named %q is set up (see Settings → Providers)", name)
	} else if err != nil {
		return err
	}
	return nil
}

// providerName is the provider the turn really uses, as the office names
// it (a Settings provider such as "hung"), not its client's kind.
func (e *turnEnv) providerName() string {
	if e.kind != "" {
		return e.kind
	}
	return e.provider.Name()
}
