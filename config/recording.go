package config

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// The recording's defaults. The store and the agents fall back to the
// same values when they are given none (store.DefaultTurnCap,
// store.DefaultBodyCap, agents.DefaultTurnRetention; a test keeps them
// equal).
const (
	DefaultTurnRetention = 30 * 24 * time.Hour
	DefaultTurnCap       = 4 << 20   // bytes kept of all the bodies of one turn
	DefaultBodyCap       = 256 << 10 // bytes kept of one request or response body
)

// Recording is the operator's settings for the turn inspector's record,
// as flags and environment variables: how long turns' model calls are
// kept and how much of them. Main hands them to store.Config.Record and
// agents.Config.TurnRetention.
type Recording struct {
	Retention time.Duration // model calls of older turns are deleted
	TurnCap   int64         // bytes of bodies kept per turn
	BodyCap   int64         // bytes kept of one request or response body
}

// RegisterFlags registers the recording flags on fs, defaulting to their
// environment variables read through getenv. After fs is parsed, the
// returned func refuses values that cannot be used, naming the flag or
// variable.
func (r *Recording) RegisterFlags(fs *flag.FlagSet, getenv func(string) string) func() error {
	var errs []error
	r.Retention, r.TurnCap, r.BodyCap = DefaultTurnRetention, DefaultTurnCap, DefaultBodyCap
	env := func(name string, set func(string) error) {
		if v := getenv(name); v != "" {
			if err := set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", name, v, err))
			}
		}
	}
	env("BULLPEN_TURN_RETENTION", r.setRetention)
	env("BULLPEN_TURN_RECORD_CAP", sizeSetter(&r.TurnCap))
	env("BULLPEN_TURN_BODY_CAP", sizeSetter(&r.BodyCap))
	fs.Func("turn-retention", "how long the turn inspector keeps a turn's model calls, e.g. 720h or 30d (default 30d; env BULLPEN_TURN_RETENTION)", r.setRetention)
	fs.Func("turn-record-cap", "bytes of model-call bodies kept per turn, e.g. 4Mi; more is cut and marked (default 4Mi; env BULLPEN_TURN_RECORD_CAP)", sizeSetter(&r.TurnCap))
	fs.Func("turn-body-cap", "bytes kept of one model request or response body, e.g. 256Ki (default 256Ki; env BULLPEN_TURN_BODY_CAP)", sizeSetter(&r.BodyCap))
	return func() error {
		if len(errs) > 0 {
			return errs[0]
		}
		if r.BodyCap > r.TurnCap {
			return fmt.Errorf("--turn-body-cap (%d) is larger than --turn-record-cap (%d)", r.BodyCap, r.TurnCap)
		}
		return nil
	}
}

// setRetention reads a duration: Go's form (720h) or whole days (30d).
func (r *Recording) setRetention(v string) error {
	d, err := time.ParseDuration(v)
	if days, ok := strings.CutSuffix(v, "d"); ok && err != nil {
		n, aerr := strconv.Atoi(days)
		d, err = time.Duration(n)*24*time.Hour, aerr
	}
	if err != nil {
		return fmt.Errorf("not a duration like 720h or 30d")
	}
	if d < time.Hour {
		return fmt.Errorf("a retention under 1h would delete turns while people look at them")
	}
	r.Retention = d
	return nil
}

func sizeSetter(dst *int64) func(string) error {
	return func(v string) error {
		n, err := bullpen.ParseBytes(v)
		if err != nil {
			return err
		}
		if n < 1024 {
			return fmt.Errorf("%q is under 1Ki: too small to keep a request", v)
		}
		if n > 1<<30 {
			return fmt.Errorf("%q is over 1Gi", v)
		}
		*dst = n
		return nil
	}
}
