package config

import (
	"flag"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// AuthLimits are the operator's settings for refusing credential
// guessing, as flags and environment variables; main hands them to
// web.Config (AuthFailures, AuthWindow, TrustedProxies: Proxies).
type AuthLimits struct {
	// Failures is how many failed authentications a client address may
	// make per Window before it gets 429 (negative: no limit).
	Failures int
	// Window is the time over which those attempts come back.
	Window time.Duration
	// TrustedProxies is a comma-separated list of proxy IPs or CIDRs whose
	// X-Forwarded-For is believed.
	TrustedProxies string
}

// RegisterFlags registers the auth flags on fs, defaulting to their
// environment variables read through getenv. The caller parses fs, then
// calls the returned func: it refuses values the server cannot use,
// naming the variable or flag.
func (a *AuthLimits) RegisterFlags(fs *flag.FlagSet, getenv func(string) string) func() error {
	fs.IntVar(&a.Failures, "auth-failures", envInt(getenv, "BULLPEN_AUTH_FAILURES", 10),
		"failed logins or tokens per client address per --auth-window before 429; negative: no limit (env BULLPEN_AUTH_FAILURES)")
	fs.DurationVar(&a.Window, "auth-window", envDuration(getenv, "BULLPEN_AUTH_WINDOW", time.Minute),
		"window of --auth-failures (env BULLPEN_AUTH_WINDOW)")
	fs.StringVar(&a.TrustedProxies, "trusted-proxies", getenv("BULLPEN_TRUSTED_PROXIES"),
		"comma-separated proxy IPs or CIDRs whose X-Forwarded-For is believed; empty: none (env BULLPEN_TRUSTED_PROXIES)")
	return func() error { return a.check(getenv) }
}

// check refuses values the server cannot use, naming the variable.
func (a *AuthLimits) check(getenv func(string) string) error {
	if v := getenv("BULLPEN_AUTH_FAILURES"); v != "" {
		if _, err := strconv.Atoi(v); err != nil {
			return fmt.Errorf("BULLPEN_AUTH_FAILURES=%q is not a whole number", v)
		}
	}
	if v := getenv("BULLPEN_AUTH_WINDOW"); v != "" {
		if _, err := time.ParseDuration(v); err != nil {
			return fmt.Errorf("BULLPEN_AUTH_WINDOW=%q is not a duration like 1m", v)
		}
	}
	if a.Failures == 0 {
		return fmt.Errorf("--auth-failures must be positive, or negative for no limit")
	}
	if a.Window < time.Second {
		return fmt.Errorf("--auth-window must be at least 1s")
	}
	for _, p := range a.Proxies() {
		if _, err := netip.ParsePrefix(p); err != nil {
			if _, err := netip.ParseAddr(p); err != nil {
				return fmt.Errorf("--trusted-proxies: %q is neither an IP nor a CIDR", p)
			}
		}
	}
	return nil
}

// Proxies lists the trusted proxies, blanks left out.
func (a *AuthLimits) Proxies() []string {
	var out []string
	for _, p := range strings.Split(a.TrustedProxies, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// envInt parses a whole number from the environment, def when unset (a
// malformed value is refused by check).
func envInt(getenv func(string) string, name string, def int) int {
	if n, err := strconv.Atoi(getenv(name)); err == nil {
		return n
	}
	return def
}
