package sandboxes

import (
	"context"
	"strconv"
	"sync"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// pending counts the creates admitted but not finished, per owner, with
// the names they take: the Manager lists a sandbox only once it runs, so
// without them two creates at once could both pass the per-member limit
// or take the same name. They let Create check under createMu and then
// provision outside it, so that creates of a burst run side by side.
type pending struct {
	mu    sync.Mutex
	count map[int64]int
	names map[int64]map[string]int
}

func newPending() *pending {
	return &pending{count: map[int64]int{}, names: map[int64]map[string]int{}}
}

// add reserves a slot (and name, if any) for owner; the func releases it.
func (p *pending) add(owner int64, name string) func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count[owner]++
	if name != "" {
		if p.names[owner] == nil {
			p.names[owner] = map[string]int{}
		}
		p.names[owner][name]++
	}
	var once sync.Once
	return func() { once.Do(func() { p.done(owner, name) }) }
}

func (p *pending) done(owner int64, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.count[owner]--; p.count[owner] <= 0 {
		delete(p.count, owner)
	}
	if name != "" {
		if p.names[owner][name]--; p.names[owner][name] <= 0 {
			delete(p.names[owner], name)
		}
		if len(p.names[owner]) == 0 {
			delete(p.names, owner)
		}
	}
}

// of returns owner's creates in flight and whether one takes name.
func (p *pending) of(owner int64, name string) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count[owner], name != "" && p.names[owner][name] > 0
}

// admit checks that actor may create spec (name free, under the
// per-member limit, counting creates in flight) and reserves its slot
// (caller holds createMu). It returns the spec to give the Manager, with
// the owner and name tags set, and the release of the reservation.
func (s *Service) admit(ctx context.Context, actor bullpen.Member, spec sandbox.Spec, extra map[string]string) (sandbox.Spec, func(), error) {
	if actor.ID == 0 {
		return spec, nil, bullpen.Errorf(bullpen.EUNAUTHORIZED, "no acting member")
	}
	owner := strconv.FormatInt(actor.ID, 10)
	tags := make(map[string]string, len(spec.Tags)+2+len(extra))
	for k, v := range spec.Tags {
		tags[k] = v
	}
	for k, v := range extra {
		tags[k] = v
	}
	tags[bullpen.SandboxOwnerTag] = owner
	name := spec.Name
	inFlight, nameTaken := s.pending.of(actor.ID, name)
	if name != "" {
		if err := s.checkName(ctx, actor, name); err != nil {
			return spec, nil, err
		}
		if nameTaken {
			return spec, nil, bullpen.Errorf(bullpen.ECONFLICT, "you have a sandbox named %q already", name)
		}
		tags[bullpen.SandboxNameTag], spec.Name = name, ""
	}
	spec.Tags = tags
	if !seesAll(actor) {
		own, err := s.m.List(ctx, map[string]string{bullpen.SandboxOwnerTag: owner})
		if err != nil {
			return spec, nil, err
		}
		if n := len(own) + inFlight; n >= s.cfg.MaxPerMember {
			return spec, nil, bullpen.Errorf(bullpen.ERATELIMIT, "you have %d sandboxes, the most a member may have; terminate one first", n)
		}
	}
	return spec, s.pending.add(actor.ID, name), nil
}
