package config

import (
	"flag"
	"io"
	"testing"
	"time"
)

// The sandbox lifetime and agent idle defaults come from flags or env,
// and a malformed or too small value is refused rather than ignored.
func TestTimesRegisterFlags(t *testing.T) {
	tests := []struct {
		name           string
		env            map[string]string
		args           []string
		lifetime, idle time.Duration
		wantErr        bool
	}{
		{name: "defaults", lifetime: 24 * time.Hour, idle: 10 * time.Minute},
		{name: "env", env: map[string]string{"BULLPEN_SANDBOX_DEFAULT_LIFETIME": "2h", "BULLPEN_AGENT_SANDBOX_IDLE": "90s"}, lifetime: 2 * time.Hour, idle: 90 * time.Second},
		{name: "flags win", env: map[string]string{"BULLPEN_SANDBOX_DEFAULT_LIFETIME": "2h"}, args: []string{"--sandbox-default-lifetime", "30m", "--agent-sandbox-idle", "1m"}, lifetime: 30 * time.Minute, idle: time.Minute},
		{name: "malformed env", env: map[string]string{"BULLPEN_AGENT_SANDBOX_IDLE": "ten minutes"}, wantErr: true},
		{name: "zero lifetime", args: []string{"--sandbox-default-lifetime", "0s"}, wantErr: true},
		{name: "idle under a second", args: []string{"--agent-sandbox-idle", "500ms"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ts SandboxTimes
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			check := ts.RegisterFlags(fs, func(k string) string { return tt.env[k] })
			err := fs.Parse(tt.args)
			if err == nil {
				err = check()
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("flags %v = %v, want error %v", tt.args, err, tt.wantErr)
			}
			if !tt.wantErr && (ts.DefaultLifetime != tt.lifetime || ts.AgentIdle != tt.idle) {
				t.Errorf("SandboxTimes = %+v, want lifetime %v idle %v", ts, tt.lifetime, tt.idle)
			}
		})
	}
}
