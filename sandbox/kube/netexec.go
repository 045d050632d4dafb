package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox/kube/podinit"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Transports of commands and files (Config.Transport).
const (
	// TransportAuto uses the pod network, and the apiserver's pods/exec
	// for a Pod whose init does not answer there (a cluster where this
	// server does not route to Pod IPs, a Pod made before the init
	// served).
	TransportAuto = "auto"
	// TransportPod uses the pod network only.
	TransportPod = "pod"
	// TransportAPIServer uses the apiserver's pods/exec only.
	TransportAPIServer = "apiserver"
)

// unroutableFor is how long auto mode sends everything through the
// apiserver after a Pod IP did not answer at all (a dial timeout), so
// that not every command waits out a dial.
const unroutableFor = time.Minute

// netExecer runs the helper through the Pod's init ("serve") over the
// pod network, with the sandbox's token; in auto mode it falls back to
// the apiserver's exec when the Pod cannot be reached, which is safe
// because nothing was sent yet.
type netExecer struct {
	d        *Driver
	fallback execer        // nil: pod mode
	dial     time.Duration // a dial's timeout
	settle   time.Duration // how long an init may refuse before it listens
	port     int           // podinit.Port; tests change it

	mu         sync.Mutex
	targets    map[string]target // by Pod name
	unroutable time.Time         // auto mode: the apiserver until then

	pod, api atomic.Int64 // streams carried by each transport
}

// target is where a Pod's init listens and its token; epoch is the
// sandbox's start time it was read at (a new Pod has a new IP).
type target struct{ addr, token, epoch string }

func newNetExecer(d *Driver, fallback execer) *netExecer {
	dial := 10 * time.Second
	if fallback != nil {
		dial = 2 * time.Second
	}
	return &netExecer{d: d, fallback: fallback, dial: dial, settle: 5 * time.Second, port: podinit.Port, targets: map[string]target{}}
}

func (n *netExecer) stream(ctx context.Context, pod string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if n.fallback != nil && n.routeless() {
		return n.viaAPIServer(ctx, pod, cmd, stdin, stdout, stderr)
	}
	for attempt := 0; ; attempt++ {
		conn, t, err := n.connect(ctx, pod)
		if err != nil {
			if n.fallback == nil || ctx.Err() != nil {
				return 0, fmt.Errorf("kube: reach the init of pod %s: %w", pod, err)
			}
			n.noteUnroutable(err)
			return n.viaAPIServer(ctx, pod, cmd, stdin, stdout, stderr)
		}
		n.pod.Add(1)
		code, err := podinit.Call(ctx, conn, t.token, cmd[1:], stdin, stdout, stderr)
		if errors.Is(err, podinit.ErrRefused) && attempt == 0 {
			n.forget(pod) // another Pod at a stale address: read it again
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("kube: exec over the pod network: %w", err)
		}
		return code, nil
	}
}

func (n *netExecer) viaAPIServer(ctx context.Context, pod string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	n.api.Add(1)
	return n.fallback.stream(ctx, pod, cmd, stdin, stdout, stderr)
}

// connect dials the Pod's init, reading its address and token again
// when the cached ones do not answer.
func (n *netExecer) connect(ctx context.Context, pod string) (net.Conn, target, error) {
	t, cached, err := n.target(ctx, pod)
	if err != nil {
		return nil, t, err
	}
	if cached {
		dialer := net.Dialer{Timeout: n.dial}
		if conn, err := dialer.DialContext(ctx, "tcp", t.addr); err == nil {
			return conn, t, nil
		}
		n.forget(pod)
		if t, _, err = n.target(ctx, pod); err != nil {
			return nil, t, err
		}
	}
	conn, err := n.dialInit(ctx, t.addr)
	return conn, t, err
}

// dialInit dials an init, again while it refuses for up to n.settle:
// the init of a Pod that has just started (or restarted) listens
// moments after its container runs.
func (n *netExecer) dialInit(ctx context.Context, addr string) (net.Conn, error) {
	dialer := net.Dialer{Timeout: n.dial}
	deadline := time.Now().Add(n.settle)
	for {
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || time.Now().After(deadline) {
			return conn, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// target returns the Pod's init address and token, cached until the
// sandbox starts again.
func (n *netExecer) target(ctx context.Context, pod string) (target, bool, error) {
	epoch := n.epoch(pod)
	n.mu.Lock()
	t, ok := n.targets[pod]
	n.mu.Unlock()
	if ok && t.epoch == epoch {
		return t, true, nil
	}
	t, err := n.lookup(ctx, pod)
	if err != nil {
		return t, false, err
	}
	t.epoch = epoch
	n.mu.Lock()
	n.targets[pod] = t
	n.mu.Unlock()
	return t, false, nil
}

// epoch is the start time of the Pod's sandbox as this replica knows it.
func (n *netExecer) epoch(pod string) string {
	if r := n.d.cached("sb_" + strings.TrimPrefix(pod, "bullpen-")); r != nil {
		return r.Info.StartedAt.String()
	}
	return ""
}

// lookup reads the Pod's IP and the token its init was given: the Secret
// and key its container's token variable refers to.
func (n *netExecer) lookup(ctx context.Context, pod string) (target, error) {
	d := n.d
	p, err := d.c.CoreV1().Pods(d.ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return target{}, fmt.Errorf("read the pod: %w", err)
	}
	if p.Status.PodIP == "" {
		return target{}, fmt.Errorf("the pod has no IP yet")
	}
	var secret, key string
	for _, c := range p.Spec.Containers {
		for _, e := range c.Env {
			if c.Name == container && e.Name == podinit.TokenEnv && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				secret, key = e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key
			}
		}
	}
	if secret == "" {
		return target{}, fmt.Errorf("the pod's init has no token (a pod made before the init served)")
	}
	sec, err := d.c.CoreV1().Secrets(d.ns).Get(ctx, secret, metav1.GetOptions{})
	if err != nil {
		return target{}, fmt.Errorf("read the token: %w", err)
	}
	tok := string(sec.Data[key])
	if tok == "" {
		return target{}, fmt.Errorf("secret %s has no %s", secret, key)
	}
	return target{addr: net.JoinHostPort(p.Status.PodIP, strconv.Itoa(n.port)), token: tok}, nil
}

func (n *netExecer) forget(pod string) {
	n.mu.Lock()
	delete(n.targets, pod)
	n.mu.Unlock()
}

func (n *netExecer) routeless() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return time.Now().Before(n.unroutable)
}

// noteUnroutable remembers a dial that timed out: the Pod IPs do not
// route from here.
func (n *netExecer) noteUnroutable(err error) {
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		return
	}
	n.mu.Lock()
	n.unroutable = time.Now().Add(unroutableFor)
	n.mu.Unlock()
	n.d.log.Warn("kube: the pod network does not answer; commands go through the apiserver's exec for a while", "err", err)
}

// StreamCounts returns how many command and file streams went over the
// pod network and how many through the apiserver's exec since New: the
// way to see which transport a cluster gets.
func (d *Driver) StreamCounts() (pod, apiserver int64) {
	switch e := d.exec.(type) {
	case *netExecer:
		return e.pod.Load(), e.api.Load()
	case *restExecer:
		return 0, e.count.Load()
	}
	return 0, 0
}
