package main

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen/web"
)

// AuthLimits are the operator's settings for refusing credential guessing.
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

// flags registers the auth flags, defaulting to their env.
func (a *AuthLimits) flags(fs *flag.FlagSet) {
	fs.IntVar(&a.Failures, "auth-failures", envInt("BULLPEN_AUTH_FAILURES", 10),
		"failed logins or tokens per client address per --auth-window before 429; negative: no limit (env BULLPEN_AUTH_FAILURES)")
	fs.DurationVar(&a.Window, "auth-window", envDuration("BULLPEN_AUTH_WINDOW", time.Minute),
		"window of --auth-failures (env BULLPEN_AUTH_WINDOW)")
	fs.StringVar(&a.TrustedProxies, "trusted-proxies", os.Getenv("BULLPEN_TRUSTED_PROXIES"),
		"comma-separated proxy IPs or CIDRs whose X-Forwarded-For is believed; empty: none (env BULLPEN_TRUSTED_PROXIES)")
}

// check refuses values the server cannot use, naming the variable.
func (a *AuthLimits) check() error {
	if v := os.Getenv("BULLPEN_AUTH_FAILURES"); v != "" {
		if _, err := strconv.Atoi(v); err != nil {
			return fmt.Errorf("BULLPEN_AUTH_FAILURES=%q is not a whole number", v)
		}
	}
	if v := os.Getenv("BULLPEN_AUTH_WINDOW"); v != "" {
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
	for _, p := range a.proxies() {
		if _, err := netip.ParsePrefix(p); err != nil {
			if _, err := netip.ParseAddr(p); err != nil {
				return fmt.Errorf("--trusted-proxies: %q is neither an IP nor a CIDR", p)
			}
		}
	}
	return nil
}

// proxies lists the trusted proxies, blanks left out.
func (a *AuthLimits) proxies() []string {
	var out []string
	for _, p := range strings.Split(a.TrustedProxies, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// apply puts the limits into the web server's config.
func (a *AuthLimits) apply(cfg *web.Config) {
	cfg.AuthFailures, cfg.AuthWindow, cfg.TrustedProxies = a.Failures, a.Window, a.proxies()
}

// envInt parses a whole number from the environment, def when unset (a
// malformed value is refused by check).
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}
