package agents

import (
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// Default timeouts of a turn (the model-call ones are llm.DefaultTimeouts).
const (
	DefaultTurnDeadline = 10 * time.Minute
	DefaultWaitNotice   = 30 * time.Second
)

// builtinTimeouts are used where neither role nor office sets one.
var builtinTimeouts = bullpen.Timeouts{Connect: bullpen.Duration(llm.DefaultTimeouts.Connect), FirstByte: bullpen.Duration(llm.DefaultTimeouts.FirstByte),
	Idle: bullpen.Duration(llm.DefaultTimeouts.Idle), Turn: bullpen.Duration(DefaultTurnDeadline), Notice: bullpen.Duration(DefaultWaitNotice)}

// llm returns the model-call part.
func llmTimeouts(t bullpen.Timeouts) llm.Timeouts {
	return llm.Timeouts{Connect: time.Duration(t.Connect), FirstByte: time.Duration(t.FirstByte), Idle: time.Duration(t.Idle)}
}

func validateTimeouts(t *bullpen.Timeouts, file string) error {
	checks := []struct {
		field string
		v     bullpen.Duration
		max   time.Duration
	}{
		{"timeouts.connect", t.Connect, time.Hour},
		{"timeouts.first_byte", t.FirstByte, time.Hour},
		{"timeouts.idle", t.Idle, time.Hour},
		{"timeouts.turn", t.Turn, 24 * time.Hour},
		{"timeouts.notice", t.Notice, time.Hour},
	}
	for _, c := range checks {
		if c.v < 0 || time.Duration(c.v) > c.max {
			return invalid(file, c.field, "must be between 0 (the default) and %s", c.max)
		}
	}
	return nil
}

// Environment variables TimeoutsFromEnv reads.
const (
	EnvConnectTimeout   = "BULLPEN_MODEL_CONNECT_TIMEOUT"
	EnvFirstByteTimeout = "BULLPEN_MODEL_FIRST_BYTE_TIMEOUT"
	EnvIdleTimeout      = "BULLPEN_MODEL_IDLE_TIMEOUT"
	EnvTurnDeadline     = "BULLPEN_TURN_DEADLINE"
	EnvWaitNotice       = "BULLPEN_MODEL_NOTICE_AFTER"
)

// TimeoutsFromEnv reads the office-wide timeouts through getenv (os.Getenv
// in main). An unset variable keeps the default; a bad one is an error
// naming it.
func TimeoutsFromEnv(getenv func(string) string) (bullpen.Timeouts, error) {
	var t bullpen.Timeouts
	for _, v := range []struct {
		name string
		dst  *bullpen.Duration
	}{{EnvConnectTimeout, &t.Connect}, {EnvFirstByteTimeout, &t.FirstByte}, {EnvIdleTimeout, &t.Idle},
		{EnvTurnDeadline, &t.Turn}, {EnvWaitNotice, &t.Notice}} {
		s := getenv(v.name)
		if s == "" {
			continue
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return t, fmt.Errorf("agents: %s=%q: want a positive duration such as 30s or 10m", v.name, s)
		}
		*v.dst = bullpen.Duration(d)
	}
	return t, nil
}
