package config_test

import (
	"flag"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/config"
)

// The auth limits come from flags or env; malformed values are refused;
// Proxies lists the trusted proxies with blanks left out.
func TestAuthLimitsRegisterFlags(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		failures int
		window   time.Duration
		proxies  []string
		wantErr  bool
	}{
		{name: "defaults", failures: 10, window: time.Minute},
		{name: "env", env: map[string]string{"BULLPEN_AUTH_FAILURES": "3", "BULLPEN_AUTH_WINDOW": "30s", "BULLPEN_TRUSTED_PROXIES": "10.0.0.1, ,10.1.0.0/16"}, failures: 3, window: 30 * time.Second, proxies: []string{"10.0.0.1", "10.1.0.0/16"}},
		{name: "flags win", env: map[string]string{"BULLPEN_AUTH_FAILURES": "3"}, args: []string{"--auth-failures", "-1"}, failures: -1, window: time.Minute},
		{name: "malformed env", env: map[string]string{"BULLPEN_AUTH_FAILURES": "many"}, wantErr: true},
		{name: "malformed window env", env: map[string]string{"BULLPEN_AUTH_WINDOW": "soon"}, wantErr: true},
		{name: "zero failures", args: []string{"--auth-failures", "0"}, wantErr: true},
		{name: "short window", args: []string{"--auth-window", "10ms"}, wantErr: true},
		{name: "bad proxy", args: []string{"--trusted-proxies", "10.0.0.1,not-an-ip"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a config.AuthLimits
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			check := a.RegisterFlags(fs, func(k string) string { return tt.env[k] })
			err := fs.Parse(tt.args)
			if err == nil {
				err = check()
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("flags %v = %v, want error %v", tt.args, err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if a.Failures != tt.failures || a.Window != tt.window || !slices.Equal(a.Proxies(), tt.proxies) {
				t.Errorf("AuthLimits = failures %d window %v proxies %q, want %d %v %q",
					a.Failures, a.Window, a.Proxies(), tt.failures, tt.window, tt.proxies)
			}
		})
	}
}
