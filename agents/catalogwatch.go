package agents

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/fsnotify/fsnotify"
)

// reloadDelay gathers the events of one save (editors write, rename and
// chmod in a burst) into one reload.
const reloadDelay = 150 * time.Millisecond

// Watch reloads the roles directory on every change to it until ctx ends,
// creating the directory if it is missing. Each reload's problems are
// logged; the catalog keeps the last good version of a broken role. It
// reloads once when it starts watching, so no change is missed between
// LoadCatalog and Watch.
func (c *Catalog) Watch(ctx context.Context, log *slog.Logger) error {
	if c.dir == "" {
		return nil
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Errorf("agents: roles directory: %w", err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("agents: watching role files: %w", err)
	}
	defer w.Close()
	if err := w.Add(c.dir); err != nil {
		return fmt.Errorf("agents: watching role files in %s: %w", c.dir, err)
	}
	reload := func() {
		if err := c.Reload(); err != nil {
			log.Warn("agents: some role files have problems", "err", err)
		}
	}
	reload()
	var due <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-w.Events:
			if !ok {
				return nil
			}
			due = time.After(reloadDelay)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			log.Warn("agents: watching role files", "err", err)
		case <-due:
			due = nil
			reload()
		}
	}
}
