package sandbox

import (
	"context"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
)

// MaxTimeout bounds a lifetime set on a live sandbox (SetTimeout).
const MaxTimeout = 30 * 24 * time.Hour

// SetTimeout moves a live sandbox's end: it is terminated d from now
// (d = 0: never), whatever its Timeout at create was. Info.Timeout then
// counts from the create, so Info stays consistent.
func (m *Manager) SetTimeout(ctx context.Context, id string, d time.Duration) error {
	if d < 0 || d > MaxTimeout {
		return bullpen.Errorf(bullpen.EINVALID, "timeout must be between 0 and %s", MaxTimeout)
	}
	return m.withSandbox(id, func(s *sandbox) error {
		if d == 0 {
			s.meta.ExpiresAt, s.meta.Timeout = time.Time{}, 0
		} else {
			s.meta.ExpiresAt = m.now().Add(d)
			s.meta.Timeout = s.meta.ExpiresAt.Sub(s.meta.CreatedAt)
		}
		return s.saveMeta()
	})
}
