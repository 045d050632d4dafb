package podinit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// runExec is "exec TAG DIR OPTS K=V… -- CMD…": CMD runs in DIR with
// the container's environment (the image's, the spec's, the secrets')
// and K=V… over it (never the token), in its own process group; stdin, stdout and stderr
// are the helper's. TAG names the exec for "kill TAG". OPTS is "0",
// "1" (KILLTREE: the whole group is killed when CMD ends), or
// comma-separated "tree" and "pty=ROWSxCOLS" (CMD on a terminal of its
// own: pty.go). The helper exits with
// CMD's status (128+signal when a signal ended it).
func runExec(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	sep := -1
	for i, a := range args {
		if a == "--" {
			sep = i
			break
		}
	}
	if sep < 4 || sep == len(args)-1 {
		return usage(stderr, "exec TAG DIR KILLTREE [K=V…] -- CMD…")
	}
	opts, err := parseExecOpts(args[3])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	dir, killTree, argv := args[2], opts.killTree, args[sep+1:]
	env := mergeEnv(withoutToken(os.Environ()), args[4:sep])
	path := argv[0]
	if !strings.Contains(path, "/") {
		lp, err := lookPath(path, env)
		if err != nil {
			fmt.Fprintf(stderr, "%s: command not found\n", path)
			return 127
		}
		path = lp
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir, cmd.Env = dir, env
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	wait := cmd.Wait
	if opts.rows > 0 {
		wait, err = startOnPTY(cmd, opts.rows, opts.cols, stdin, stdout)
	} else {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", argv[0], err)
		return 126
	}
	pgid := cmd.Process.Pid
	go func() {
		<-sigs // "kill TAG": the group goes, and so do we
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}()
	err = wait()
	if killTree {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 126
	}
	return 0
}

// lookPath finds file in the PATH of env (the command's, not the
// helper's).
func lookPath(file string, env []string) (string, error) {
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range strings.Split(path, ":") {
		if d == "" {
			d = "."
		}
		p := d + "/" + file
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}

// killExec is "kill TAG": SIGTERM to every helper running "exec TAG …",
// which kills its command's process group. A kill can overtake its exec
// (both are separate requests to the apiserver), so it looks for up to
// killWait before giving up.
func killExec(tag string) error {
	want := "\x00exec\x00" + tag + "\x00"
	deadline := time.Now().Add(killWait)
	for {
		found, err := signalTagged(want)
		if err != nil || found || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killWait is how long "kill TAG" waits for its exec to appear.
const killWait = 3 * time.Second

func signalTagged(want string) (bool, error) {
	pids, err := tagged(want)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	return len(pids) > 0, err
}

// tagged returns the pids of the processes (but this one) whose command
// line holds want: the helpers running "exec TAG".
func tagged(want string) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range ents {
		pid := 0
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), want) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// mergeEnv returns base with over's variables replacing or joining it.
func mergeEnv(base, over []string) []string {
	idx := map[string]int{}
	out := make([]string, 0, len(base)+len(over))
	for _, kv := range append(base, over...) {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[k]; ok {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}
