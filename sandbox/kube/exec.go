package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"
)

// execer runs a command in a Pod's sandbox container and returns its
// exit status; tests replace it.
type execer interface {
	stream(ctx context.Context, pod string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error)
}

// restExecer goes through the apiserver's pods/exec: websocket, or SPDY
// where the apiserver does not upgrade to websockets.
type restExecer struct {
	c     kubernetes.Interface
	rest  *rest.Config
	ns    string
	count atomic.Int64 // streams, for StreamCounts
}

func (e *restExecer) stream(ctx context.Context, pod string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	e.count.Add(1)
	if e.rest == nil {
		return 0, fmt.Errorf("kube: no REST configuration for exec")
	}
	u := e.c.CoreV1().RESTClient().Post().Resource("pods").Name(pod).Namespace(e.ns).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdin: stdin != nil, Stdout: true, Stderr: true},
			scheme.ParameterCodec).URL()
	ws, err := remotecommand.NewWebSocketExecutor(e.rest, "GET", u.String())
	if err != nil {
		return 0, fmt.Errorf("kube: exec: %w", err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(e.rest, "POST", u)
	if err != nil {
		return 0, fmt.Errorf("kube: exec: %w", err)
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return 0, fmt.Errorf("kube: exec: %w", err)
	}
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	var ee utilexec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		return ee.ExitStatus(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("kube: exec: %w", err)
	}
	return 0, nil
}

// running returns the record of a running sandbox and marks activity.
func (d *Driver) running(ctx context.Context, id, what string) (*record, error) {
	r, err := d.record(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.Info.State != sandbox.StateRunning {
		return nil, bullpen.Errorf(bullpen.ECONFLICT, "cannot %s sandbox %s: it is %s", what, r.Info.ID, r.Info.State)
	}
	d.touch(r.Info.ID)
	return r, nil
}

// Exec starts a command as the sandbox user, through the helper (its
// directory, environment, process group); cancelling ctx kills it. A
// command that does not exist exits 127 rather than failing Exec. A PTY
// command gets its terminal from the helper (no script(1) in the image
// needed); its output all comes on stdout, as a terminal shows it.
func (d *Driver) Exec(ctx context.Context, id string, req sandbox.ExecRequest) (*sandbox.Process, error) {
	pty := req.PTY
	req.PTY = nil
	opts := map[bool]string{true: "1", false: "0"}[req.KillTree] // what helpers before the PTY option read
	if pty != nil {
		if err := sandbox.CheckPTYSize(pty.Rows, pty.Cols); err != nil {
			return nil, err
		}
		opts += fmt.Sprintf(",pty=%dx%d", pty.Rows, pty.Cols)
	}
	if err := sandbox.CheckExec(&req); err != nil {
		return nil, err
	}
	r, err := d.running(ctx, id, "exec in")
	if err != nil {
		return nil, err
	}
	id = r.Info.ID
	dir := req.Workdir
	if dir == "" {
		dir = r.Info.Workdir
	} else if !path.IsAbs(dir) {
		dir = path.Join(r.Info.Workdir, dir)
	}
	tag := randHex(8)
	argv := []string{helperPath, "exec", tag, dir, opts}
	for _, k := range sortedKeys(req.Env) {
		argv = append(argv, k+"="+req.Env[k])
	}
	argv = append(append(argv, "--"), req.Cmd...)
	p := &proc{d: d, pod: objName(id), tag: tag, done: make(chan struct{})}
	release := d.holdBridges(r) // the command's route to Bullpen, if the sandbox has one
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		code, err := d.exec.stream(sctx, p.pod, argv, req.Stdin, outW, errW)
		outW.Close()
		errW.Close()
		cancel()
		release()
		p.finish(code, err)
		d.touch(id)
		d.emit(sandbox.EventExecFinished, id, fmt.Sprintf("%s exit=%d", req.Cmd[0], p.res.Code))
		close(p.done)
	}()
	go p.watch(ctx, req.Timeout, cancel)
	d.emit(sandbox.EventExecStarted, id, req.Cmd[0])
	hooks := sandbox.ProcessHooks{Stdout: outR, Stderr: errR, Kill: p.kill, Wait: p.wait}
	if pty != nil {
		hooks.Resize = p.resize
	}
	return sandbox.NewProcess(hooks), nil
}

// proc is one exec's state.
type proc struct {
	d        *Driver
	pod, tag string
	mu       sync.Mutex
	killed   bool
	timedOut bool
	done     chan struct{}
	res      sandbox.ExitResult
	err      error
}

// watch kills the command when ctx ends or its timeout passes; a stream
// that outlives a kill by 5 s is cut.
func (p *proc) watch(ctx context.Context, timeout time.Duration, cancel context.CancelFunc) {
	var tc <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-p.done:
		return
	case <-ctx.Done():
	case <-tc:
		p.mu.Lock()
		p.timedOut = true
		p.mu.Unlock()
	}
	_ = p.kill()
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		cancel()
	}
}

func (p *proc) kill() error {
	p.mu.Lock()
	p.killed = true
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := p.d.exec.stream(ctx, p.pod, []string{helperPath, "kill", p.tag}, nil, io.Discard, io.Discard)
	return err
}

// resize sets the size of the command's terminal.
func (p *proc) resize(rows, cols int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errb strings.Builder
	code, err := p.d.exec.stream(ctx, p.pod, []string{helperPath, "resize", p.tag, strconv.Itoa(rows), strconv.Itoa(cols)}, nil, io.Discard, &errb)
	if err == nil && code != 0 {
		err = bullpen.Errorf(bullpen.ECONFLICT, "resize: %s", strings.TrimSpace(errb.String()))
	}
	return err
}

func (p *proc) finish(code int, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err != nil && !p.killed:
		p.err = bullpen.Errorf(bullpen.ECONFLICT, "the command's stream from the sandbox ended: %v", err)
	case p.killed:
		p.res = sandbox.ExitResult{Code: -1, Signal: "killed", TimedOut: p.timedOut}
	case code > 128 && code < 128+65:
		p.res = sandbox.ExitResult{Code: -1, Signal: "signal " + strconv.Itoa(code-128)}
	default:
		p.res = sandbox.ExitResult{Code: code}
	}
}

func (p *proc) wait() (sandbox.ExitResult, error) {
	<-p.done
	return p.res, p.err
}

// Run runs a command to completion, capturing its output up to the
// configured limit.
func (d *Driver) Run(ctx context.Context, id string, req sandbox.ExecRequest) (sandbox.RunResult, error) {
	start := time.Now()
	p, err := d.Exec(ctx, id, req)
	if err != nil {
		return sandbox.RunResult{}, err
	}
	return sandbox.Collect(ctx, p, d.cfg.Sandbox.RunOutputLimit, start)
}

// Preconnect does nothing: every exec opens its own connection.
func (d *Driver) Preconnect(context.Context, string) error { return nil }

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// podIP returns the Pod's IP, "" when it has none.
func (d *Driver) podIP(ctx context.Context, id string) string {
	pod, err := d.c.CoreV1().Pods(d.ns).Get(ctx, objName(id), metav1.GetOptions{})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			d.log.Warn("kube: read a pod", "sandbox", id, "err", err)
		}
		return ""
	}
	return pod.Status.PodIP
}

func hostAddr(ip string, port int) string {
	if ip == "" {
		return ""
	}
	return net.JoinHostPort(ip, strconv.Itoa(port))
}
