// Package cli is Bullpen's command line client: `bullpen post`, `bullpen
// sandbox …`, `bullpen agents …`, `bullpen wiki …` and `bullpen tail`,
// all on package client against a server URL and a token.
//
// Where the server and token come from, first found wins: the flags
// --server and --token, the env variables BULLPEN_URL and BULLPEN_TOKEN,
// then the config file (--config, env BULLPEN_CONFIG, default
// ~/.config/bullpen/cli.json: {"server": "http://…", "token": "bp_…"}).
//
// Exit codes scripts can rely on: 0 success; 1 an error (server,
// network); 2 bad usage; 3 refused credential or permission; 4 not found;
// 5 conflict (a stale wiki revision, a taken name). `sandbox exec` exits
// with the command's own code (128+N for signal N, 124 for a timeout).
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/client"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitError    = 1
	ExitUsage    = 2
	ExitAuth     = 3
	ExitNotFound = 4
	ExitConflict = 5
)

// commands names the subcommands this package runs.
var commands = map[string]func(*env, []string) error{
	"post":       (*env).post,
	"sandbox":    (*env).sandbox,
	"agents":     (*env).agents,
	"wiki":       (*env).wiki,
	"memory":     (*env).memory,
	"task":       (*env).task,
	"routine":    (*env).routine,
	"tail":       (*env).tail,
	"login":      (*env).login,
	"completion": (*env).completion,
	"e2b":        (*env).e2b,
}

// Is reports whether args name one of the client commands, after any
// global flags (--server, --token, --config, --json), which may come
// before the command as well as after it.
func Is(args []string) bool {
	_, cmd, _, ok := splitGlobal(args)
	if !ok {
		return false
	}
	_, known := commands[cmd]
	return known
}

// valued are the global flags that take a value.
var valued = map[string]bool{"server": true, "token": true, "config": true}

// splitGlobal splits args into the global flags before the command, the
// command, and the rest. ok is false when no command follows the flags
// or a flag before it is not a global one.
func splitGlobal(args []string) (lead []string, cmd string, rest []string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			return args[:i], a, args[i+1:], true
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case name == "json" || (valued[name] && hasValue):
		case valued[name] && i+1 < len(args):
			i++
		default:
			return nil, "", nil, false
		}
	}
	return nil, "", nil, false
}

// IO is where a command reads and writes.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
}

// env is one command's run: its streams, flags and client.
type env struct {
	ctx    context.Context
	io     IO
	json   bool
	server string
	token  string
	config string
	// lead are the global flags given before the command; every flag set
	// of the command reads them first.
	lead []string
	c    *client.Client
	// url is the server the client talks to, for the hint when nothing
	// answers there.
	url string
	// handles caches the members' handles by ID, for listings.
	handles map[int64]string
}

// usageError is bad usage: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// exitError carries a command's own exit code (sandbox exec).
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Run runs one client command (args[0] is its name) and returns the
// process's exit code.
func Run(ctx context.Context, args []string, stdio IO) int {
	if stdio.Getenv == nil {
		stdio.Getenv = os.Getenv
	}
	e := &env{ctx: ctx, io: stdio}
	lead, cmd, rest, _ := splitGlobal(args)
	fn, ok := commands[cmd]
	if !ok {
		fmt.Fprintf(stdio.Stderr, "bullpen: unknown command %q (see bullpen help)\n", cmd)
		return ExitUsage
	}
	e.lead = lead
	err := fn(e, rest)
	return e.exit(err)
}

// exit prints err and maps it to an exit code.
func (e *env) exit(err error) int {
	var ue *usageError
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintln(e.io.Stderr, "bullpen:", ue.msg)
		return ExitUsage
	}
	fmt.Fprintln(e.io.Stderr, "bullpen:", message(err))
	if errors.Is(err, syscall.ECONNREFUSED) {
		fmt.Fprintf(e.io.Stderr, "bullpen: no Bullpen server answers at %s: start one (bullpen serve), or name yours with --server URL or BULLPEN_URL (bullpen login saves it)\n", e.url)
	}
	switch client.StatusOf(err) {
	case http.StatusUnauthorized, http.StatusForbidden:
		return ExitAuth
	case http.StatusNotFound:
		return ExitNotFound
	case http.StatusConflict:
		return ExitConflict
	}
	return ExitError
}

// message is what a user reads of err: the server's message for API errors.
func message(err error) string {
	var ae *client.Error
	if errors.As(err, &ae) {
		return fmt.Sprintf("%s (%s, HTTP %d)", ae.Message, ae.Code, ae.Status)
	}
	return err.Error()
}

// flags returns a flag set for a command with the global flags on it.
// usage is the synopsis line; help the text after it.
func (e *env) flags(name, usage, help string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.io.Stderr)
	fs.StringVar(&e.server, "server", "", "server URL (env BULLPEN_URL; default http://127.0.0.1:8080)")
	fs.StringVar(&e.token, "token", "", "API token (env BULLPEN_TOKEN)")
	fs.StringVar(&e.config, "config", "", "config file (env BULLPEN_CONFIG; default ~/.config/bullpen/cli.json)")
	fs.BoolVar(&e.json, "json", false, "print JSON instead of text")
	fs.Usage = func() {
		fmt.Fprintf(e.io.Stderr, "usage: bullpen %s\n\n%s\n\nflags:\n", usage, strings.TrimSpace(help))
		fs.PrintDefaults()
	}
	// The lead holds only global flags (splitGlobal checked), which every
	// flag set defines: parsing them cannot fail.
	_ = fs.Parse(e.lead)
	return fs
}

// parse parses args, flags anywhere among the positional arguments up to
// a "--", after which everything is positional. It returns the positional
// arguments; a parse error is a usage error (the flag package printed it).
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &exitError{ExitUsage}
		}
		rest := fs.Args()
		// fs.Parse consumed a "--" when it stopped at one.
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// nargs checks the count of positional arguments.
func nargs(fs *flag.FlagSet, pos []string, min, max int) error {
	if len(pos) < min || (max >= 0 && len(pos) > max) {
		fs.Usage()
		return &exitError{ExitUsage}
	}
	return nil
}

// DefaultServer is the server the client talks to when nothing names one.
const DefaultServer = "http://127.0.0.1:8080"

// connected parses a command's arguments, checks their count and makes
// the client: the common start of a command that calls the server.
func (e *env) connected(fs *flag.FlagSet, args []string, min, max int) ([]string, error) {
	pos, err := parse(fs, args)
	if err != nil {
		return nil, err
	}
	if err := nargs(fs, pos, min, max); err != nil {
		return nil, err
	}
	return pos, e.connect()
}

// connect makes the client from flags, env and the config file.
func (e *env) connect() error {
	cfg, path, err := e.readConfig(false)
	if err != nil {
		return err
	}
	server := firstOf(e.server, e.io.Getenv("BULLPEN_URL"), cfg.Server, DefaultServer)
	e.url = server
	token := firstOf(e.token, e.io.Getenv("BULLPEN_TOKEN"), cfg.Token)
	if token == "" {
		return usagef("no token: pass --token, set BULLPEN_TOKEN, or run bullpen login (it writes %s)", path)
	}
	c, err := client.New(server, token)
	if err != nil {
		return usagef("%v", err)
	}
	e.c = c
	return nil
}

// config is the CLI's config file.
type config struct {
	Server string `json:"server"`
	Token  string `json:"token"`
}

// configPath is the config file's path: --config, BULLPEN_CONFIG, else
// the user's config dir. explicit says the user named it.
func (e *env) configPath() (path string, explicit bool) {
	if path = firstOf(e.config, e.io.Getenv("BULLPEN_CONFIG")); path != "" {
		return path, true
	}
	if dir, err := os.UserConfigDir(); err == nil {
		return filepath.Join(dir, "bullpen", "cli.json"), false
	}
	return "", false
}

// readConfig reads the config file; a missing one is empty unless the
// user named it and missingOK is false.
func (e *env) readConfig(missingOK bool) (config, string, error) {
	var cfg config
	path, explicit := e.configPath()
	explicit = explicit && !missingOK
	if path == "" {
		return cfg, path, nil
	}
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return cfg, path, fmt.Errorf("config %s: %w", path, err)
		}
	case explicit || !errors.Is(err, os.ErrNotExist):
		return cfg, path, fmt.Errorf("config: %w", err)
	}
	return cfg, path, nil
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// out prints v as JSON with --json, else text.
func (e *env) out(v any, text string) error {
	if e.json {
		enc := json.NewEncoder(e.io.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, err := io.WriteString(e.io.Stdout, text)
	return err
}

// sub dispatches a command's subcommands.
func (e *env) sub(name string, args []string, subs map[string]func([]string) error, help string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(e.io.Stderr, "usage: bullpen %s <command>\n\n%s\n", name, strings.TrimSpace(help))
		if len(args) == 0 {
			return &exitError{ExitUsage}
		}
		return nil
	}
	fn, ok := subs[args[0]]
	if !ok {
		return usagef("unknown command %q for bullpen %s (see bullpen %s --help)", args[0], name, name)
	}
	return fn(args[1:])
}

// handleOf formats a member as @handle.
func handleOf(m bullpen.Member) string { return "@" + m.Handle }
