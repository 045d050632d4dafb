package agents

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/store"
)

// DemoRequest is what the office's admin asks the lead for when the demo
// starts: enough to make the team coordinate, write the wiki and (with
// sandboxes) run commands.
const DemoRequest = "@lead welcome to the demo! Please get our build machine checked and tell me what you find."

// demoStartedKey is the setting that records that the demo's request was
// posted, so a restart on the same data directory does not post it again.
const demoStartedKey = "demo.started"

// StartDemo hires the starter team on behalf of the office's first admin
// and posts DemoRequest in #general, so the dashboard shows agents at
// work. It is for `bullpen demo`, whose providers are the scripted
// simulation; it does not check that, so a caller that passes real
// providers gets a real team. On an office where it already ran it does
// nothing.
func (s *desk) StartDemo(ctx context.Context) error {
	if _, err := s.db.Setting(ctx, demoStartedKey); err == nil {
		return nil
	}
	members, err := s.off.Members(ctx)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	var admin bullpen.Member
	for _, mb := range members {
		if mb.IsAdmin {
			admin = mb
			break
		}
	}
	if _, err := s.HireTeam(ctx, admin, "starter"); err != nil {
		return fmt.Errorf("demo: hire the starter team: %w", err)
	}
	general, err := s.off.ChannelByName(ctx, admin, bullpen.GeneralChannel)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	_, err = s.off.Post(ctx, admin, bullpen.PostInput{ChannelID: general.ID, Source: bullpen.SourceWeb, Body: DemoRequest})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	_, err = s.db.Transact(ctx, func(tx *store.Tx) error { return tx.SetSetting(demoStartedKey, time.Now().UTC().Format(time.RFC3339)) })
	return err
}

// Demo starts `bullpen demo`'s simulation when someone is watching (the
// first dashboard connection, or the Start button) rather than at boot,
// so a visitor sees it from its first step.
type Demo struct {
	svc  *Service
	once sync.Once
	done chan struct{}
	err  error
}

// NewDemo returns the demo of svc, not started.
func NewDemo(svc *Service) *Demo { return &Demo{svc: svc, done: make(chan struct{})} }

// Watched starts the demo the first time it is called; later calls do
// nothing. It returns at once.
func (d *Demo) Watched() {
	d.once.Do(func() {
		go func() {
			defer close(d.done)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if d.err = d.svc.StartDemo(ctx); d.err != nil {
				d.svc.log.Error("demo did not start", "err", d.err)
			}
		}()
	})
}

// Started is closed once the demo has started (or failed to: Err says).
func (d *Demo) Started() <-chan struct{} { return d.done }

// Err is why the demo did not start, after Started is closed.
func (d *Demo) Err() error { return d.err }

// Paced makes a simulated model take between min and max per answer, so
// that a person can follow the demo step by step (1–3 s in `bullpen
// demo`; tests make it short).
func Paced(p llm.Provider, min, max time.Duration) llm.Provider {
	return &paced{Provider: p, min: min, max: max}
}

type paced struct {
	llm.Provider
	min, max time.Duration
}

// Complete waits a random time in [min, max], then asks the model.
func (p *paced) Complete(ctx context.Context, req llm.Request, onDelta func(string)) (llm.Response, error) {
	d := p.min
	if p.max > p.min {
		d += rand.N(p.max - p.min)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return llm.Response{}, ctx.Err()
	case <-t.C:
	}
	return p.Provider.Complete(ctx, req, onDelta)
}
