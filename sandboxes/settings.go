package sandboxes

import (
	"context"
	"strconv"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox/image"
	"github.com/bullpen-hq/bullpen/store"
)

// pullOnCreateKey is the settings row of SandboxSettings.PullOnCreate.
const pullOnCreateKey = "sandboxes.pull_on_create"

// Settings returns the office's sandbox settings. Any member may read
// them (the New-sandbox form says whether unknown images are pulled).
func (s *Service) Settings(ctx context.Context, actor bullpen.Member) (bullpen.SandboxSettings, error) {
	if actor.ID == 0 {
		return bullpen.SandboxSettings{}, bullpen.Errorf(bullpen.EUNAUTHORIZED, "log in to see the sandbox settings")
	}
	return s.settings(ctx)
}

func (s *Service) settings(ctx context.Context) (bullpen.SandboxSettings, error) {
	v, err := s.db.Setting(ctx, pullOnCreateKey)
	switch {
	case bullpen.IsCode(err, bullpen.ENOTFOUND):
		return bullpen.SandboxSettings{}, nil // the defaults
	case err != nil:
		return bullpen.SandboxSettings{}, err
	}
	on, _ := strconv.ParseBool(v)
	return bullpen.SandboxSettings{PullOnCreate: on}, nil
}

// UpdateSettings changes the sandbox settings (human admins only); the
// change and its event commit in one transaction. An empty change is
// EINVALID and changes nothing.
func (s *Service) UpdateSettings(ctx context.Context, actor bullpen.Member, in bullpen.SandboxSettingsInput) (bullpen.SandboxSettings, error) {
	if err := needAdmin(actor, "change the sandbox settings"); err != nil {
		return bullpen.SandboxSettings{}, err
	}
	if in.PullOnCreate == nil {
		return bullpen.SandboxSettings{}, bullpen.Errorf(bullpen.EINVALID, `nothing to change: send {"pull_on_create": true} or false`)
	}
	out := bullpen.SandboxSettings{PullOnCreate: *in.PullOnCreate}
	_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
		if err := tx.SetSetting(pullOnCreateKey, strconv.FormatBool(out.PullOnCreate)); err != nil {
			return err
		}
		_, err := tx.Emit(bullpen.EventSandboxSettings, 0, nil, bullpen.SandboxSettingsEvent{SandboxSettings: out, ByID: actor.ID})
		return err
	})
	if err != nil {
		return bullpen.SandboxSettings{}, err
	}
	return out, nil
}

// pullIfMissing pulls ref before a create when the office allows it and
// the image store lacks it, so the create finds it. One pull runs at a
// time: a second create of the same image waits and then finds it. A
// failed pull is the create's error and leaves nothing behind.
func (s *Service) pullIfMissing(ctx context.Context, ref string) error {
	if s.images == nil || ref == "" || ref == image.BaseHost {
		return nil
	}
	if _, err := s.images.Get(ctx, ref); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return nil // here already (or another problem, which the create reports)
	}
	set, err := s.settings(ctx)
	if err != nil || !set.PullOnCreate {
		return err
	}
	s.pullMu.Lock()
	defer s.pullMu.Unlock()
	if _, err := s.images.Get(ctx, ref); err == nil {
		return nil // pulled by the create this one waited for
	}
	if _, err := s.images.Pull(ctx, ref, ref); err != nil {
		return &bullpen.Error{Code: bullpen.ErrorCode(err), Err: err,
			Message: "image " + strconv.Quote(ref) + " is not on this server and pulling it failed: " + bullpen.ErrorMessage(err)}
	}
	s.log.Info("sandboxes: image pulled for a create", "image", ref)
	return nil
}

// Defaults reports the limits a sandbox gets when its spec leaves them
// out: the operator's defaults (--sandbox-default-cpu, --sandbox-default-memory).
func (s *Service) Defaults() (cpu float64, memoryBytes int64) { return s.m.Defaults() }
