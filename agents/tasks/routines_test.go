package tasks_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/tasks"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// Bad routines are refused with a clear error and store nothing.
func TestRoutineBadInput(t *testing.T) {
	f, ctx := openFixture(t), context.Background()
	seq := f.lastSeq(t)
	ok := func() bullpen.RoutineInput {
		return bullpen.RoutineInput{Name: ptr("standup"), Cron: ptr("0 9 * * 1-5"), TZ: ptr("Europe/Paris"), Action: ptr(bullpen.RoutineWake),
			ChannelID: &f.general.ID, AgentID: &f.eng.ID, Prompt: ptr("post the standup")}
	}
	bad := map[string]func(in *bullpen.RoutineInput){
		"never fires":      func(in *bullpen.RoutineInput) { in.Cron = ptr("0 0 31 2 *") },
		"bad cron":         func(in *bullpen.RoutineInput) { in.Cron = ptr("61 * * * *") },
		"unknown zone":     func(in *bullpen.RoutineInput) { in.TZ = ptr("Mars/Olympus") },
		"two schedules":    func(in *bullpen.RoutineInput) { in.IntervalSec = ptr(int64(60)) },
		"no schedule":      func(in *bullpen.RoutineInput) { in.Cron = nil },
		"unknown action":   func(in *bullpen.RoutineInput) { in.Action = ptr("dance") },
		"person as agent":  func(in *bullpen.RoutineInput) { in.AgentID = &f.ada.ID },
		"no prompt":        func(in *bullpen.RoutineInput) { in.Prompt = ptr("") },
		"label skip blank": func(in *bullpen.RoutineInput) { in.Skip = ptr(bullpen.SkipNoOpenLabel) },
		"unknown skip":     func(in *bullpen.RoutineInput) { in.Skip = ptr("when_bored") },
		"task no template": func(in *bullpen.RoutineInput) { in.Action = ptr(bullpen.RoutineTask) },
	}
	for name, mut := range bad {
		in := ok()
		mut(&in)
		_, err := f.svc.CreateRoutine(ctx, f.ada, in)
		wantCode(t, name, err, bullpen.EINVALID)
	}
	_, err := f.svc.CreateRoutine(ctx, f.eng, ok())
	wantCode(t, "an agent creates a routine", err, bullpen.EFORBIDDEN)
	if rs, _ := f.svc.Routines(ctx, f.ada); len(rs) != 0 || len(f.eventsSince(t, seq)) != 0 {
		t.Errorf("bad routines stored %d routines, %d events", len(rs), len(f.eventsSince(t, seq)))
	}
	r, err := f.svc.CreateRoutine(ctx, f.ada, ok())
	if err != nil || r.NextRunAt == nil || !r.NextRunAt.Equal(time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("CreateRoutine = %+v, %v; want the next 9:00 Paris (Monday 08:00 UTC)", r, err)
	}
}

// After downtime, the missed ticks make one run, not one per tick.
func TestRoutineCatchUpOnce(t *testing.T) {
	f, ctx := openFixture(t), context.Background()
	r, err := f.svc.CreateRoutine(ctx, f.ada, bullpen.RoutineInput{Name: ptr("triage"), IntervalSec: ptr(int64(60)),
		Action: ptr(bullpen.RoutineTask), ChannelID: &f.general.ID, Task: &bullpen.TaskInput{Title: "Triage the inbox", OwnerID: f.eng.ID}})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Add(10*time.Minute + 30*time.Second)
	if fired, skipped, err := f.svc.Tick(ctx); err != nil || fired != 1 || skipped != 0 {
		t.Fatalf("Tick after 10 missed minutes = %d fired, %d skipped, %v; want 1 fired", fired, skipped, err)
	}
	if fired, _, _ := f.svc.Tick(ctx); fired != 0 {
		t.Errorf("a second Tick at once fired %d", fired)
	}
	ticks, _ := f.svc.RoutineTicks(ctx, f.ada, r.ID)
	got, _ := f.svc.Routine(ctx, f.ada, r.ID)
	if len(ticks) != 1 || ticks[0].Missed != 9 || ticks[0].TaskID == 0 || !got.NextRunAt.After(f.clock.Now()) {
		t.Errorf("ticks = %+v, next %v; want one tick folding 9 missed, with its task, next in the future", ticks, got.NextRunAt)
	}
	if task, err := f.db.Task(ctx, ticks[0].TaskID); err != nil || task.Title != "Triage the inbox" || task.OwnerID != f.eng.ID {
		t.Errorf("routine's task = %+v, %v", task, err)
	}
}

// Over a quiet hour a routine that needs new messages skips every tick,
// saying why, and posts nothing (so no agent wakes and no model is
// called); a new message makes the next tick fire, once.
func TestRoutineQuietHourSkips(t *testing.T) {
	f, ctx := openFixture(t), context.Background()
	quiet, err := f.off.CreateChannel(ctx, f.ada, bullpen.ChannelInput{Name: "quiet"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.svc.CreateRoutine(ctx, f.ada, bullpen.RoutineInput{Name: ptr("digest"), IntervalSec: ptr(int64(60)), Action: ptr(bullpen.RoutineWake),
		ChannelID: &quiet.ID, AgentID: &f.eng.ID, Prompt: ptr("summarize what is new"), Skip: ptr(bullpen.SkipNoNewMessages)})
	if err != nil {
		t.Fatal(err)
	}
	seq := f.lastSeq(t)
	for range 60 {
		f.clock.Add(time.Minute)
		if fired, skipped, err := f.svc.Tick(ctx); err != nil || fired != 0 || skipped != 1 {
			t.Fatalf("quiet tick = %d fired, %d skipped, %v", fired, skipped, err)
		}
	}
	for _, ev := range f.eventsSince(t, seq) {
		if ev.Type != bullpen.EventRoutineSkipped {
			t.Fatalf("a quiet hour wrote %s, want only routine.skipped", ev.Type)
		}
	}
	got, _ := f.svc.Routine(ctx, f.ada, r.ID)
	if got.LastState != bullpen.TickSkipped || got.LastReason != "no new messages in #quiet since the last run" {
		t.Errorf("routine after a quiet hour = %q %q", got.LastState, got.LastReason)
	}
	if _, err := f.off.Post(ctx, f.ada, bullpen.PostInput{ChannelID: quiet.ID, Body: "news!"}); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Minute)
	if fired, _, _ := f.svc.Tick(ctx); fired != 1 {
		t.Fatalf("tick after a new message fired %d, want 1", fired)
	}
	f.clock.Add(time.Minute)
	if fired, skipped, _ := f.svc.Tick(ctx); fired != 0 || skipped != 1 {
		t.Errorf("the routine's own post counted as new: %d fired", fired)
	}
}

// A 1-second routine over 60 ticks on two replicas, one of which dies
// twice (its database connections cut mid-run) and comes back: every
// tick happens exactly once, and each fired tick made one task.
func TestRoutineTicksOnceAcrossReplicas(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		f := newFixture(t, cfg)
		ctx := context.Background()
		r, err := f.svc.CreateRoutine(ctx, f.ada, bullpen.RoutineInput{Name: ptr("heartbeat"), IntervalSec: ptr(int64(1)),
			Action: ptr(bullpen.RoutineTask), ChannelID: &f.general.ID, Task: &bullpen.TaskInput{Title: "beat"}})
		if err != nil {
			t.Fatal(err)
		}
		start := f.clock.Now()
		replicas := []*tasks.Service{f.svc, f.svc}
		var other *store.DB
		if cfg.URL != "" {
			replicas[1], other = f.replica(t, cfg)
		}
		for sec := 1; sec <= 60; sec++ {
			f.clock.Add(time.Second)
			if cfg.URL != "" && (sec == 20 || sec == 40) {
				replicas[1], other = f.killAndReplace(t, cfg, replicas[1], other)
			}
			var wg sync.WaitGroup
			for _, rep := range replicas {
				wg.Add(1)
				go func() { defer wg.Done(); rep.Tick(ctx) }()
			}
			wg.Wait()
		}
		ticks, err := f.db.RoutineTicks(ctx, r.ID, 100)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[time.Time]bool{}
		for _, k := range ticks {
			if seen[k.DueAt] || k.State != bullpen.TickFired || k.Missed != 0 {
				t.Errorf("tick %+v repeated or not fired on time", k)
			}
			seen[k.DueAt] = true
		}
		for i := 1; i <= 60; i++ {
			if !seen[start.Add(time.Duration(i)*time.Second).UTC()] {
				t.Errorf("tick %d never happened", i)
			}
		}
		beats, _ := f.db.Tasks(ctx, bullpen.TaskFilter{Limit: 500})
		if len(beats) != 60 {
			t.Errorf("%d tasks made, want 60", len(beats))
		}
	})
}

// killAndReplace closes a replica's database under it while it ticks, as
// a crash does (what had not committed did not happen), and opens a new
// replica in its place.
func (f *fixture) killAndReplace(t *testing.T, cfg store.Config, old *tasks.Service, db *store.DB) (*tasks.Service, *store.DB) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); old.Tick(context.Background()) }()
	db.Close()
	<-done
	return f.replica(t, cfg)
}
