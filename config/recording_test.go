package config

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/store"
)

func parseRecording(env map[string]string, args ...string) (Recording, error) {
	var r Recording
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	check := r.RegisterFlags(fs, func(k string) string { return env[k] })
	if err := fs.Parse(args); err != nil {
		return r, err
	}
	return r, check()
}

func TestRecordingFlags(t *testing.T) {
	r, err := parseRecording(nil)
	if err != nil || r.Retention != 30*24*time.Hour || r.TurnCap != store.DefaultTurnCap || r.BodyCap != store.DefaultBodyCap {
		t.Errorf("defaults = %+v, %v; want 30 days, 4Mi, 256Ki", r, err)
	}
	r, err = parseRecording(map[string]string{"BULLPEN_TURN_RETENTION": "7d", "BULLPEN_TURN_RECORD_CAP": "8Mi"}, "--turn-body-cap", "64Ki")
	if err != nil || r.Retention != 7*24*time.Hour || r.TurnCap != 8<<20 || r.BodyCap != 64<<10 {
		t.Errorf("env and flags = %+v, %v; want 7 days, 8Mi, 64Ki", r, err)
	}
	if r, err = parseRecording(map[string]string{"BULLPEN_TURN_RETENTION": "7d"}, "--turn-retention", "48h"); err != nil || r.Retention != 48*time.Hour {
		t.Errorf("flag over env = %+v, %v; want 48h", r, err)
	}
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"BULLPEN_TURN_RETENTION": "soon"}, nil, "BULLPEN_TURN_RETENTION"},
		{nil, []string{"--turn-retention", "5m"}, "under 1h"},
		{nil, []string{"--turn-record-cap", "12"}, "too small"},
		{nil, []string{"--turn-body-cap", "8Mi"}, "larger than --turn-record-cap"},
	} {
		if _, err := parseRecording(tc.env, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parse(%v, %v) = %v, want an error with %q", tc.env, tc.args, err, tc.want)
		}
	}
}
