package mcp

import (
	"context"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressEvery is how often a running tool call reports progress.
const progressEvery = 2 * time.Second

// progress reports a tool call's progress to a client that asked for it
// (a progressToken in the call's _meta): at the start, then every
// progressEvery while the call runs (a sandbox command, an agent's
// answer). Office tools do not know how far along they are, so the
// notifications count seconds and carry no total. The returned func stops
// the reports; it must be called before the result is sent.
func (h *handler) progress(ctx context.Context, req *sdk.CallToolRequest) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	name := req.Params.Name
	go func() {
		defer close(done)
		start := time.Now()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for n := 0.0; ; n++ {
			msg := fmt.Sprintf("%s running, %d s", name, int(time.Since(start).Seconds()))
			if req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg}) != nil {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}
