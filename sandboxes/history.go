package sandboxes

import (
	"context"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Bounds of one page of exec history.
const (
	DefaultHistoryLimit = 50
	MaxHistoryLimit     = 200
)

// ExecHistory returns a page of the sandbox's exec history, newest first:
// every command run in it (through the API, the dashboard's terminal or an
// agent's sandbox tools), read from the stored exec events, so it survives
// reloads and restarts. before is a cursor from an earlier page (0: the
// newest); limit 0 means DefaultHistoryLimit. The first page also lists
// commands still running.
func (s *Service) ExecHistory(ctx context.Context, actor bullpen.Member, id string, before int64, limit int) (bullpen.SandboxExecPage, error) {
	if limit == 0 {
		limit = DefaultHistoryLimit
	}
	if limit < 1 || limit > MaxHistoryLimit || before < 0 {
		return bullpen.SandboxExecPage{}, bullpen.Errorf(bullpen.EINVALID, "limit must be between 1 and %d and before a cursor from an earlier page", MaxHistoryLimit)
	}
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return bullpen.SandboxExecPage{}, err
	}
	done, err := s.db.SandboxEvents(ctx, store.SandboxEventQuery{SandboxID: in.ID, Types: []string{bullpen.EventSandboxExecFinished}, Before: before, Limit: limit})
	if err != nil {
		return bullpen.SandboxExecPage{}, err
	}
	page := bullpen.SandboxExecPage{Items: make([]bullpen.SandboxExecEntry, 0, len(done))}
	if before == 0 {
		if page.Items, err = s.running(ctx, in.ID, done, len(done) < limit); err != nil {
			return bullpen.SandboxExecPage{}, err
		}
	}
	for _, ev := range done {
		if p, err := bullpen.SandboxExecOf(ev); err == nil {
			page.Items = append(page.Items, entryOf(ev, p))
		}
	}
	if len(done) == limit {
		page.NextBefore = done[len(done)-1].Seq
	}
	return page, nil
}

// running lists, newest first, the commands with no end among done that
// started after the oldest of done (any, when done is the whole history).
func (s *Service) running(ctx context.Context, sandboxID string, done []bullpen.Event, whole bool) ([]bullpen.SandboxExecEntry, error) {
	var after int64
	ended := make(map[string]bool, len(done))
	for _, ev := range done {
		after = ev.Seq
		if p, err := bullpen.SandboxExecOf(ev); err == nil {
			ended[p.ExecID] = true
		}
	}
	if whole {
		after = 0
	}
	started, err := s.db.SandboxEvents(ctx, store.SandboxEventQuery{SandboxID: sandboxID, Types: []string{bullpen.EventSandboxExecStarted}, Limit: MaxHistoryLimit})
	if err != nil {
		return nil, err
	}
	out := []bullpen.SandboxExecEntry{} // a page of none is [], never null
	for _, ev := range started {
		if p, err := bullpen.SandboxExecOf(ev); err == nil && ev.Seq > after && !ended[p.ExecID] {
			out = append(out, entryOf(ev, p))
		}
	}
	return out, nil
}

// entryOf turns a stored exec event into a history entry.
func entryOf(ev bullpen.Event, p bullpen.SandboxExecEvent) bullpen.SandboxExecEntry {
	e := bullpen.SandboxExecEntry{ID: p.ExecID, SandboxID: p.ID, Command: p.Command, ByID: p.ByID, PTY: p.PTY, StartedAt: ev.At,
		Running: ev.Type == bullpen.EventSandboxExecStarted}
	if e.Running {
		return e
	}
	at := ev.At
	e.FinishedAt, e.StartedAt = &at, at.Add(-time.Duration(p.DurationMS)*time.Millisecond)
	e.Ended, e.ExitCode, e.Signal, e.TimedOut, e.DurationMS, e.Error = p.Ended, p.ExitCode, p.Signal, p.TimedOut, p.DurationMS, p.Error
	e.Stdout, e.Stderr, e.StdoutBytes, e.StderrBytes = p.Stdout, p.Stderr, p.StdoutBytes, p.StderrBytes
	e.OutputWithheld = p.OutputWithheld
	return e
}
