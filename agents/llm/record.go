package llm

import (
	"context"

	"github.com/bullpen-hq/bullpen"
)

// Recorder receives the model calls a provider makes, for the turn
// inspector: one per HTTP attempt (a retry is a call of its own), with
// the request body exactly as sent and the response body exactly as
// received, SSE included. Providers ignore its errors: a call is never
// failed because it could not be recorded. *store.DB has this shape; the
// agents runtime wraps it to add the turn.
type Recorder interface {
	RecordModelCall(ctx context.Context, c bullpen.ModelCall) error
}

type recorderKey struct{}

// WithRecorder returns a context whose model calls are recorded by r.
// Providers take it from the call's context rather than their config, so
// one provider serves every turn and each call lands in its own turn.
func WithRecorder(ctx context.Context, r Recorder) context.Context {
	return context.WithValue(ctx, recorderKey{}, r)
}

// RecorderFrom returns the context's Recorder, or nil.
func RecorderFrom(ctx context.Context) Recorder {
	r, _ := ctx.Value(recorderKey{}).(Recorder)
	return r
}
