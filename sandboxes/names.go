package sandboxes

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// nameRe is what a sandbox name may look like (as the runtime's names).
var nameRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$`)

// lookup finds a sandbox the actor may act on; one that belongs to someone
// else is not found, so its existence does not leak. A name is looked up
// among the actor's own sandboxes; an admin's name that is not one of
// theirs is looked up among everyone's, and must then be unambiguous.
func (s *Service) lookup(ctx context.Context, actor bullpen.Member, idOrName string) (sandbox.Info, error) {
	if idOrName == "" || len(idOrName) > 128 {
		return sandbox.Info{}, bullpen.Errorf(bullpen.EINVALID, "invalid sandbox id or name")
	}
	notFound := bullpen.Errorf(bullpen.ENOTFOUND, "sandbox %q not found", idOrName)
	if !strings.HasPrefix(idOrName, "sb_") {
		in, err := s.byName(ctx, actor, idOrName)
		if err == nil || !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			return in, err
		}
	}
	in, err := s.m.Get(ctx, idOrName) // an id, or a name given before bullpen.SandboxNameTag
	if err != nil {
		if bullpen.IsCode(err, bullpen.ENOTFOUND) {
			return sandbox.Info{}, notFound
		}
		return sandbox.Info{}, err
	}
	if !canSee(actor, in) {
		return sandbox.Info{}, notFound
	}
	return in, nil
}

// byName finds a live sandbox by its bullpen.SandboxNameTag, the actor's own first.
func (s *Service) byName(ctx context.Context, actor bullpen.Member, name string) (sandbox.Info, error) {
	if actor.ID == 0 {
		return sandbox.Info{}, bullpen.Errorf(bullpen.ENOTFOUND, "sandbox %q not found", name)
	}
	own, err := s.m.List(ctx, map[string]string{bullpen.SandboxOwnerTag: strconv.FormatInt(actor.ID, 10), bullpen.SandboxNameTag: name})
	if err != nil || len(own) > 0 {
		return first(own), err
	}
	if seesAll(actor) {
		all, err := s.m.List(ctx, map[string]string{bullpen.SandboxNameTag: name})
		switch {
		case err != nil:
			return sandbox.Info{}, err
		case len(all) == 1:
			return all[0], nil
		case len(all) > 1:
			return sandbox.Info{}, bullpen.Errorf(bullpen.EINVALID, "%d members have a sandbox named %q; use its id", len(all), name)
		}
	}
	return sandbox.Info{}, bullpen.Errorf(bullpen.ENOTFOUND, "sandbox %q not found", name)
}

// checkName refuses a malformed name or one the actor uses already.
func (s *Service) checkName(ctx context.Context, actor bullpen.Member, name string) error {
	if !nameRe.MatchString(name) || strings.HasPrefix(name, "sb_") {
		return bullpen.Errorf(bullpen.EINVALID, "invalid name %q: 1-63 of [a-zA-Z0-9_.-], not starting with sb_", name)
	}
	own, err := s.m.List(ctx, map[string]string{bullpen.SandboxOwnerTag: strconv.FormatInt(actor.ID, 10)})
	if err != nil {
		return err
	}
	for _, in := range own {
		if bullpen.SandboxName(in.Name, in.Tags) == name {
			return bullpen.Errorf(bullpen.ECONFLICT, "you have a sandbox named %q already", name)
		}
	}
	return nil
}
