package kube

import (
	"context"
	"errors"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
)

// Activity is shared between replicas through the record: an agent's
// turns may run on one replica while another one checks the idle timeout,
// and a replica must not stop a sandbox another one is using. Each replica
// keeps the activity it sees in memory and writes it into the record at
// most once per persistEvery of the sandbox (a few writes per idle
// timeout); the records' watch brings it to the others. Before it applies
// an idle action, a replica reads the record afresh and leaves a sandbox
// that was active since.

// persistEvery is how stale the record's activity may get: a quarter of
// the idle timeout, between 1 second and 1 minute.
func persistEvery(idle time.Duration) time.Duration {
	return min(max(idle/4, time.Second), time.Minute)
}

// touch notes activity on a sandbox, and writes it into its record when
// the record's copy has grown stale.
func (d *Driver) touch(id string) {
	now := d.cfg.Sandbox.Now()
	d.mu.Lock()
	r := d.recs[id]
	save := r != nil && r.Info.IdleTimeout > 0 && now.Sub(r.saved) >= persistEvery(r.Info.IdleTimeout)
	if r != nil {
		r.Info.LastActivity = now
		if save {
			r.saved = now
		}
	}
	d.mu.Unlock()
	if save {
		go d.saveActivity(id, now)
	}
}

// saveActivity writes activity at t into the sandbox's record unless the
// record holds a later one.
func (d *Driver) saveActivity(id string, t time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := d.updateRecord(ctx, id, func(r *record) error {
		if !r.Info.LastActivity.Before(t) {
			return errUnchanged
		}
		r.Info.LastActivity = t
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		d.log.Debug("kube: save a sandbox's activity", "sandbox", id, "err", err)
	}
}

var (
	errUnchanged = errors.New("unchanged")
	errActive    = errors.New("active on another replica")
)

// stillIdle reads the record afresh: false when another replica saw
// activity within the idle timeout (its cache is then updated).
func (d *Driver) stillIdle(ctx context.Context, id string) bool {
	now := d.cfg.Sandbox.Now()
	var seen time.Time
	err := d.updateRecord(ctx, id, func(r *record) error {
		if r.Info.State == sandbox.StateRunning && now.Sub(r.Info.LastActivity) <= r.Info.IdleTimeout {
			seen = r.Info.LastActivity
			return errActive
		}
		return errUnchanged
	})
	if errors.Is(err, errActive) {
		d.mu.Lock()
		if r := d.recs[id]; r != nil && r.Info.LastActivity.Before(seen) {
			r.Info.LastActivity = seen
		}
		d.mu.Unlock()
		return false
	}
	return errors.Is(err, errUnchanged)
}
