package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/bullpen-hq/bullpen/client"
)

const sandboxHelp = `
commands:
  create   create and start a sandbox; prints its ID
  exec     run a command, streaming its output; exits with its code
  cp       copy a file into or out of a sandbox (ID:PATH on one side)
  ls       list sandboxes, or the files of ID[:DIR]
  rm       terminate sandboxes, or remove ID:PATH
  pause    freeze every process of sandboxes (resume thaws them)
  resume   thaw paused sandboxes
  stop     end sandboxes' processes, keeping their files (start boots them)
  start    start stopped sandboxes again
  snapshot save a sandbox's filesystem as an image; prints its name
  ports    list, publish or revoke a sandbox's published ports
  stats    a sandbox's current CPU, memory and process use
  images   list the images sandboxes can start from`

func (e *env) sandbox(args []string) error {
	return e.sub("sandbox", args, e.sandboxSubs(), sandboxHelp)
}

// sandboxSubs are the subcommands of bullpen sandbox.
func (e *env) sandboxSubs() map[string]func([]string) error {
	return map[string]func([]string) error{
		"create": e.sandboxCreate, "exec": e.sandboxExec, "cp": e.sandboxCp, "ls": e.sandboxLs, "rm": e.sandboxRm,
		"pause":    e.sandboxAction(client.ActionPause, "\nFreezes every process of the sandboxes; resume thaws them."),
		"resume":   e.sandboxAction(client.ActionResume, "\nThaws paused sandboxes."),
		"stop":     e.sandboxAction(client.ActionStop, "\nEnds the sandboxes' processes and keeps their files; start boots them again."),
		"start":    e.sandboxAction(client.ActionStart, "\nStarts stopped sandboxes again, with their files."),
		"snapshot": e.sandboxSnapshot, "ports": e.sandboxPorts, "stats": e.sandboxStats, "images": e.sandboxImages,
	}
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// pairs turns KEY=VALUE flags into a map.
func pairs(name string, vs []string) (map[string]string, error) {
	if len(vs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, v := range vs {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return nil, usagef("--%s wants KEY=VALUE, got %q", name, v)
		}
		out[k] = val
	}
	return out, nil
}

func (e *env) sandboxCreate(args []string) error {
	fs := e.flags("sandbox create", "sandbox create [flags]", `
Creates and starts a sandbox with the limits and network policy given
(server defaults for the rest) and prints its ID.`)
	var spec client.SandboxSpec
	var tags, envs multi
	fs.StringVar(&spec.Image, "image", "", "image (default: the host-tools base)")
	fs.StringVar(&spec.Name, "name", "", "a name, unique among your live sandboxes")
	fs.Float64Var(&spec.CPU, "cpu", 0, "cores, fractional")
	memory := fs.String("memory", "", `memory limit, e.g. "512Mi"`)
	disk := fs.String("disk", "", `disk quota, e.g. "1Gi"`)
	timeout := fs.Duration("timeout", 0, "lifetime, e.g. 1h")
	network := fs.String("network", "none", `egress: "none", "open", or comma-separated CIDRs and domains`)
	fs.Var(&tags, "tag", "KEY=VALUE tag (repeatable)")
	fs.Var(&envs, "env", "KEY=VALUE environment variable (repeatable)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 0, 0); err != nil {
		return err
	}
	if spec.Tags, err = pairs("tag", tags); err != nil {
		return err
	}
	if spec.Env, err = pairs("env", envs); err != nil {
		return err
	}
	if *memory != "" {
		spec.Memory = *memory
	}
	if *disk != "" {
		spec.Disk = *disk
	}
	if *timeout > 0 {
		spec.Timeout = timeout.Seconds()
	}
	spec.Network = networkOf(*network)
	if err := e.connect(); err != nil {
		return err
	}
	sb, err := e.c.CreateSandbox(e.ctx, spec)
	if err != nil {
		return err
	}
	return e.out(sb, sb.ID)
}

// networkOf reads the --network flag: none, open, or a list of CIDRs and
// domains (anything with a letter and no slash is a domain).
func networkOf(v string) *client.NetworkPolicy {
	switch v {
	case "", "none":
		return nil
	case "open":
		return &client.NetworkPolicy{Allow: []string{"0.0.0.0/0"}}
	}
	np := &client.NetworkPolicy{}
	for _, x := range strings.Split(v, ",") {
		x = strings.TrimSpace(x)
		switch {
		case x == "":
		case strings.Contains(x, "/") || strings.Trim(x, "0123456789.") == "":
			np.Allow = append(np.Allow, x)
		default:
			np.Domains = append(np.Domains, x)
		}
	}
	return np
}

func (e *env) sandboxExec(args []string) error {
	fs := e.flags("sandbox exec", "sandbox exec [flags] ID [--] CMD [ARG...]", `
Runs CMD in sandbox ID, streaming its stdout and stderr as they come,
and exits with its exit code (128+N when signal N ended it, 124 when it
timed out). A single CMD argument with spaces runs under /bin/sh -c.
-i sends this command's stdin to CMD.`)
	stdin := fs.Bool("i", false, "send stdin to the command")
	timeout := fs.Duration("timeout", 0, "kill the command after this long (e.g. 30s)")
	workdir := fs.String("workdir", "", "working directory in the sandbox")
	var envs multi
	fs.Var(&envs, "env", "KEY=VALUE environment variable (repeatable)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := nargs(fs, pos, 2, -1); err != nil {
		return err
	}
	req := client.ExecRequest{Cmd: pos[1:], Workdir: *workdir, Timeout: *timeout}
	if len(req.Cmd) == 1 && strings.ContainsAny(req.Cmd[0], " \t|;&<>$") {
		req.Cmd = []string{"/bin/sh", "-c", req.Cmd[0]}
	}
	if req.Env, err = pairs("env", envs); err != nil {
		return err
	}
	if *stdin {
		if req.Stdin, err = readAll(e.io.Stdin, 1<<20); err != nil {
			return err
		}
		if req.Stdin == nil {
			req.Stdin = []byte{}
		}
	}
	if err := e.connect(); err != nil {
		return err
	}
	res, err := e.c.Exec(e.ctx, pos[0], req, e.io.Stdout, e.io.Stderr)
	if err != nil {
		return err
	}
	return exitOf(res)
}

// exitOf maps how a command ended to this process's exit code.
func exitOf(res client.ExecResult) error {
	code := res.ExitCode
	switch {
	case res.TimedOut:
		code = 124
	case res.Signal != "" && code <= 0:
		code = 128 + signalNumber(res.Signal)
	}
	if code == 0 {
		return nil
	}
	return &exitError{code}
}

// signalNumber returns the number of a signal name such as "SIGKILL" or
// "killed" (9 when unknown: the usual cause).
func signalNumber(name string) int {
	n := map[string]int{"SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGABRT": 6, "SIGKILL": 9, "SIGSEGV": 11, "SIGPIPE": 13, "SIGTERM": 15}
	if v, ok := n[strings.ToUpper(name)]; ok {
		return v
	}
	if v, ok := n["SIG"+strings.ToUpper(name)]; ok {
		return v
	}
	return 9
}

// readAll reads at most limit bytes, refusing more.
func readAll(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, usagef("stdin is over %d bytes; copy large input in with `bullpen sandbox cp` first", limit)
	}
	return b, nil
}
