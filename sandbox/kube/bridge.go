package kube

import (
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/kube/podinit"
	corev1 "k8s.io/api/core/v1"
)

// A sandbox's bridges (Spec.Bridges: the agent CLIs' route to Bullpen)
// work as the local runtime's do, without opening the Pod's network: the
// Pod's init listens on each bridge's loopback port (podinit.BridgeEnv),
// and while this replica runs a command in the sandbox it keeps
// bridgeWaiting requests open to the init per bridge (podinit.Bridge),
// each of which becomes one of the commands' connections, carried to the
// bridge's unix socket here. So the replica that runs an agent's CLI is
// the one that serves it, and the sandbox's egress stays what its policy
// says ("none": nothing leaves the Pod but through its init).
const (
	bridgeWaiting = 4               // requests kept waiting per bridge
	bridgeLinger  = 5 * time.Second // served after the last command ends
	bridgeRetry   = time.Second     // after a request failed
)

// bridgeHold is one sandbox's bridges being served by this replica.
type bridgeHold struct {
	refs   int
	cancel context.CancelFunc
	timer  *time.Timer // the linger after the last release
}

// checkBridges checks a spec's bridges for this driver.
func (d *Driver) checkBridges(bs []sandbox.Bridge, ports []int) error {
	if len(bs) == 0 {
		return nil
	}
	if err := sandbox.CheckBridges(bs, ports); err != nil {
		return err
	}
	if _, ok := d.exec.(*netExecer); !ok {
		return refuse("bridge sockets into a sandbox over the apiserver transport (use --kube-transport=auto or pod)")
	}
	for _, b := range bs {
		if b.Port == podinit.Port {
			return invalid("bridge: port %d is the sandbox init's", b.Port)
		}
	}
	return nil
}

// checkMounts checks a spec's mounts: only a path a claim was configured
// for (Config.Mounts) can be mounted, read-only, from that claim.
func (d *Driver) checkMounts(ms []sandbox.Mount) error {
	seen := map[string]bool{}
	for _, m := range ms {
		if _, ok := d.cfg.Mounts[m.Path]; !ok {
			return refuse("mount the host directory " + strconv.Quote(m.HostPath) + " at " + strconv.Quote(m.Path) +
				": no claim is configured for that path (the agent CLIs' is set by --kube-cli-claim)")
		}
		if seen[m.Path] {
			return invalid("mount: %s is mounted twice", m.Path)
		}
		seen[m.Path] = true
	}
	return nil
}

// mountVolumes are the Pod's volumes and the sandbox container's mounts
// of the record's Mounts: each path's claim, read-only.
func (d *Driver) mountVolumes(r *record) ([]corev1.Volume, []corev1.VolumeMount) {
	var vs []corev1.Volume
	var ms []corev1.VolumeMount
	for i, m := range r.Info.Mounts {
		name := "mount-" + strconv.Itoa(i)
		vs = append(vs, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: d.cfg.Mounts[m.Path], ReadOnly: true}}})
		ms = append(ms, corev1.VolumeMount{Name: name, MountPath: m.Path, ReadOnly: true})
	}
	return vs, ms
}

// bridgeEnv tells the init which loopback ports to listen on.
func bridgeEnv(r *record) []corev1.EnvVar {
	if len(r.Info.Bridges) == 0 {
		return nil
	}
	ports := make([]string, len(r.Info.Bridges))
	for i, b := range r.Info.Bridges {
		ports[i] = strconv.Itoa(b.Port)
	}
	return []corev1.EnvVar{{Name: podinit.BridgeEnv, Value: strings.Join(ports, ",")}}
}

// holdBridges serves the sandbox's bridges until the returned release
// is called (and bridgeLinger after, so that consecutive commands share
// the requests). A sandbox without bridges, or a driver without the pod
// network transport, holds nothing.
func (d *Driver) holdBridges(r *record) (release func()) {
	n, ok := d.exec.(*netExecer)
	if len(r.Info.Bridges) == 0 || !ok {
		return func() {}
	}
	id := r.Info.ID
	d.bmu.Lock()
	defer d.bmu.Unlock()
	h := d.bridges[id]
	if h == nil {
		ctx, cancel := context.WithCancel(context.Background())
		h = &bridgeHold{cancel: cancel}
		d.bridges[id] = h
		for _, b := range r.Info.Bridges {
			for range bridgeWaiting {
				d.wg.Add(1)
				go func() { defer d.wg.Done(); d.serveBridge(ctx, n, id, b) }()
			}
		}
	}
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
	h.refs++
	var once sync.Once
	return func() { once.Do(func() { d.releaseBridges(id, h) }) }
}

func (d *Driver) releaseBridges(id string, h *bridgeHold) {
	d.bmu.Lock()
	defer d.bmu.Unlock()
	if h.refs--; h.refs > 0 {
		return
	}
	h.timer = time.AfterFunc(bridgeLinger, func() {
		d.bmu.Lock()
		defer d.bmu.Unlock()
		if h.refs == 0 && d.bridges[id] == h {
			h.cancel()
			delete(d.bridges, id)
		}
	})
}

// dropBridges stops serving a sandbox's bridges at once (its Pod is
// going).
func (d *Driver) dropBridges(id string) {
	d.bmu.Lock()
	defer d.bmu.Unlock()
	if h := d.bridges[id]; h != nil {
		if h.timer != nil {
			h.timer.Stop()
		}
		h.cancel()
		delete(d.bridges, id)
	}
}

// dropAllBridges stops serving every bridge (Close).
func (d *Driver) dropAllBridges() {
	d.bmu.Lock()
	ids := make([]string, 0, len(d.bridges))
	for id := range d.bridges {
		ids = append(ids, id)
	}
	d.bmu.Unlock()
	for _, id := range ids {
		d.dropBridges(id)
	}
}

// serveBridge keeps one request waiting at the sandbox's init for b's
// next connection, forwards the connection it gets to b's socket, and
// asks again, until ctx ends.
func (d *Driver) serveBridge(ctx context.Context, n *netExecer, id string, b sandbox.Bridge) {
	pod := objName(id)
	for ctx.Err() == nil {
		conn, t, err := n.connect(ctx, pod)
		if err == nil {
			var c net.Conn
			if c, err = podinit.Bridge(ctx, conn, t.token, b.Port); err == nil {
				go forward(c, b.HostSocket)
				continue
			}
			if errors.Is(err, podinit.ErrRefused) {
				n.forget(pod) // a new Pod at a stale address, or one without the bridge yet
			}
		}
		if ctx.Err() == nil {
			d.log.Debug("kube: bridge request", "sandbox", id, "port", b.Port, "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(bridgeRetry):
		}
	}
}

// forward carries c's bytes to and from the unix socket at sock; a
// socket that does not answer closes c (the command sees its connection
// closed, as locally).
func forward(c net.Conn, sock string) {
	defer c.Close()
	up, err := net.Dial("unix", sock)
	if err != nil {
		return
	}
	defer up.Close()
	podinit.Relay(c, up)
}

// sameBridgePorts reports whether two bridge lists listen on the same
// ports (their sockets may differ: each replica has its own).
func sameBridgePorts(a, b []sandbox.Bridge) bool {
	return slices.EqualFunc(a, b, func(x, y sandbox.Bridge) bool { return x.Port == y.Port })
}
