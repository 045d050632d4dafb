package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler wraps h so that no log line shows a secret of s: the message
// and every attribute (errors and other values by their text) are
// redacted before h sees them.
func (s *Secrets) Handler(h slog.Handler) slog.Handler { return &handler{s: s, h: h} }

type handler struct {
	s *Secrets
	h slog.Handler
}

func (x *handler) Enabled(ctx context.Context, l slog.Level) bool { return x.h.Enabled(ctx, l) }

func (x *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, x.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(x.attr(a))
		return true
	})
	return x.h.Handle(ctx, out)
}

func (x *handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = x.attr(a)
	}
	return &handler{s: x.s, h: x.h.WithAttrs(red)}
}

func (x *handler) WithGroup(name string) slog.Handler {
	return &handler{s: x.s, h: x.h.WithGroup(name)}
}

// attr redacts one attribute; a value whose text shows a secret becomes
// that text, redacted.
func (x *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, x.s.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = x.attr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		var text string
		if err, ok := v.Any().(error); ok {
			text = err.Error()
		} else {
			text = fmt.Sprint(v.Any())
		}
		if red := x.s.String(text); red != text {
			return slog.String(a.Key, red)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
