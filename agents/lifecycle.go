package agents

import (
	"context"
	"fmt"
	"sync"
)

// lifecycle is the service's run: the context its goroutines run on from
// Start until Close, and the group Close waits for.
type lifecycle struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// start begins the run; a second start is an error.
func (l *lifecycle) start() (context.Context, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx != nil {
		return nil, fmt.Errorf("agents: already started")
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l.ctx, nil
}

// spawn runs fn on the run's context in a goroutine Close waits for; it
// does nothing and returns false before Start or after Close.
func (l *lifecycle) spawn(fn func(ctx context.Context)) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx == nil || l.ctx.Err() != nil {
		return false
	}
	ctx := l.ctx
	l.wg.Add(1)
	go func() { defer l.wg.Done(); fn(ctx) }()
	return true
}

// stop ends the run and waits for its goroutines.
func (l *lifecycle) stop() {
	l.mu.Lock()
	cancel := l.cancel
	l.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	l.wg.Wait()
}

// running returns the run's context, nil before Start or after Close.
func (l *lifecycle) running() context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx == nil || l.ctx.Err() != nil {
		return nil
	}
	return l.ctx
}
