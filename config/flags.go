package config

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// onOff is a boolean flag that also reads on/off, as docs/operations.md's
// configuration table writes them (--sandboxes=off), and yes/no.
type onOff struct{ v *bool }

// parseOnOff reads on/off, true/false, yes/no and 1/0.
func parseOnOff(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q: want on or off", s)
}

// String implements flag.Value.
func (o onOff) String() string {
	if o.v != nil && *o.v {
		return "on"
	}
	return "off"
}

// Set implements flag.Value.
func (o onOff) Set(s string) error {
	b, err := parseOnOff(s)
	if err == nil {
		*o.v = b
	}
	return err
}

// IsBoolFlag lets --sandboxes alone mean on.
func (o onOff) IsBoolFlag() bool { return true }

// onOffVar registers an on/off flag whose default comes from env (def when
// unset); a bad env value is an error at check time, not a silent default.
func onOffVar(fs *flag.FlagSet, getenv func(string) string, p *bool, name, env string, def bool, usage string) func() error {
	*p = def
	var envErr error
	if v := getenv(env); v != "" {
		b, err := parseOnOff(v)
		*p, envErr = b, err
		if err != nil {
			envErr = fmt.Errorf("%s: %w", env, err)
		}
	}
	fs.Var(onOff{p}, name, usage)
	return func() error { return envErr }
}

// Ops are the operator's logging and metrics settings.
type Ops struct {
	LogFormat    string
	MetricsToken string
}

// RegisterFlags adds --log-format and --metrics-token; the returned check
// validates them after parsing.
func (o *Ops) RegisterFlags(fs *flag.FlagSet, getenv func(string) string) func() error {
	fs.StringVar(&o.LogFormat, "log-format", envOr(getenv, "BULLPEN_LOG_FORMAT", "text"), "log lines as text or json (env BULLPEN_LOG_FORMAT)")
	fs.StringVar(&o.MetricsToken, "metrics-token", envOr(getenv, "BULLPEN_METRICS_TOKEN", ""), "Bearer token that lets non-loopback clients read /metrics (env BULLPEN_METRICS_TOKEN)")
	return func() error {
		if o.LogFormat != "text" && o.LogFormat != "json" {
			return fmt.Errorf("--log-format %q: want text or json", o.LogFormat)
		}
		return nil
	}
}

// NewLogger returns the server's logger writing text or JSON lines
// (Ops.LogFormat) at level info.
func NewLogger(w io.Writer, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
