package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/kube/podinit"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pause is refused: a Pod cannot be frozen through the apiserver.
func (d *Driver) Pause(context.Context, string) error { return refuse("pause a sandbox") }

// Resume is refused: nothing is ever paused.
func (d *Driver) Resume(context.Context, string) error { return refuse("resume a sandbox") }

// Stats reads the sandbox container's cgroup usage from inside it,
// through the helper (no metrics API needed).
func (d *Driver) Stats(ctx context.Context, id string) (sandbox.Usage, error) {
	r, err := d.running(ctx, id, "read the usage of")
	if err != nil {
		return sandbox.Usage{}, err
	}
	var out, errb bytes.Buffer
	code, err := d.exec.stream(ctx, objName(r.Info.ID), []string{helperPath, "stats"}, nil, &out, &errb)
	if err == nil && code != 0 {
		err = fmt.Errorf("kube: stats: exit %d: %s", code, strings.TrimSpace(errb.String()))
	}
	if err != nil {
		return sandbox.Usage{}, err
	}
	var u sandbox.Usage
	if err := json.Unmarshal(out.Bytes(), &u); err != nil {
		return sandbox.Usage{}, fmt.Errorf("kube: stats: %w", err)
	}
	return u, nil
}

// Attach replaces a sandbox's Mounts and Bridges, as locally: a mount
// is its path's claim (Config.Mounts), a bridge a loopback port of the
// Pod's init that this replica serves while it runs commands there
// (bridge.go). The same mounts and bridge ports again only record the
// sockets (each replica has its own). Otherwise a running sandbox is
// stopped and started again, its workspace kept: a Pod's volumes and
// its init's environment are fixed when it starts.
func (d *Driver) Attach(ctx context.Context, id string, mounts []sandbox.Mount, bridges []sandbox.Bridge) error {
	if err := d.checkMounts(mounts); err != nil {
		return err
	}
	r, err := d.record(ctx, id)
	if err != nil {
		return err
	}
	ports := make([]int, len(r.Info.Ports))
	for i, p := range r.Info.Ports {
		ports[i] = p.Port
	}
	if err := d.checkBridges(bridges, ports); err != nil {
		return err
	}
	if slices.Equal(r.Info.Mounts, mounts) && slices.Equal(r.Info.Bridges, bridges) {
		return nil
	}
	restart := !slices.Equal(r.Info.Mounts, mounts) || !sameBridgePorts(r.Info.Bridges, bridges)
	running := r.Info.State == sandbox.StateRunning
	if restart && running {
		if err := d.Stop(ctx, r.Info.ID); err != nil {
			return err
		}
	}
	if err := d.update(ctx, r.Info.ID, func(in *sandbox.Info) {
		in.Mounts, in.Bridges = slices.Clone(mounts), slices.Clone(bridges)
	}); err != nil {
		return err
	}
	if restart && running {
		return d.Start(ctx, r.Info.ID)
	}
	return nil
}

// SetTimeout moves a sandbox's end to d from now (0: never), as locally.
func (d *Driver) SetTimeout(ctx context.Context, id string, dur time.Duration) error {
	if dur < 0 || dur > sandbox.MaxTimeout {
		return bullpen.Errorf(bullpen.EINVALID, "timeout must be between 0 and %s", sandbox.MaxTimeout)
	}
	r, err := d.record(ctx, id)
	if err != nil {
		return err
	}
	now := d.cfg.Sandbox.Now()
	return d.update(ctx, r.Info.ID, func(in *sandbox.Info) {
		if dur == 0 {
			in.ExpiresAt, in.Timeout = time.Time{}, 0
			return
		}
		in.ExpiresAt = now.Add(dur)
		in.Timeout = in.ExpiresAt.Sub(in.CreatedAt)
	})
}

// SetNetwork replaces a sandbox's egress policy: the NetworkPolicy now,
// the Pod's own rules by restarting a running Pod (its workspace is
// kept; its processes are not).
func (d *Driver) SetNetwork(ctx context.Context, id string, p sandbox.NetworkPolicy) error {
	r, err := d.record(ctx, id)
	if err != nil {
		return err
	}
	cidrs, err := allowed(p)
	if err != nil {
		return err
	}
	if slices.Equal(cidrs, r.Info.AllowedCIDRs) {
		return nil
	}
	if err := d.update(ctx, r.Info.ID, func(in *sandbox.Info) { in.Network, in.AllowedCIDRs = p, cidrs }); err != nil {
		return err
	}
	r.Info.Network, r.Info.AllowedCIDRs = p, cidrs
	if _, err := d.c.NetworkingV1().NetworkPolicies(d.ns).Update(ctx, d.policyObject(r), metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("kube: update the network policy of %s: %w", r.Info.ID, err)
	}
	if r.Info.State != sandbox.StateRunning {
		return nil
	}
	if err := d.Stop(ctx, r.Info.ID); err != nil {
		return err
	}
	return d.Start(ctx, r.Info.ID)
}

// PublishPort makes a sandbox port reachable at the Pod's IP (where this
// server routes to Pod IPs, as Bullpen's port proxy does).
func (d *Driver) PublishPort(ctx context.Context, id string, port int) (sandbox.PortInfo, error) {
	if port < 1 || port > 65535 {
		return sandbox.PortInfo{}, bullpen.Errorf(bullpen.EINVALID, "invalid port %d", port)
	}
	if port == podinit.Port {
		return sandbox.PortInfo{}, bullpen.Errorf(bullpen.EINVALID, "port %d is the sandbox init's, on the kubernetes driver; publish another", port)
	}
	r, err := d.running(ctx, id, "publish a port of")
	if err != nil {
		return sandbox.PortInfo{}, err
	}
	err = d.update(ctx, r.Info.ID, func(in *sandbox.Info) {
		if !slices.ContainsFunc(in.Ports, func(p sandbox.PortInfo) bool { return p.Port == port }) {
			in.Ports = append(in.Ports, sandbox.PortInfo{Port: port})
		}
	})
	if err != nil {
		return sandbox.PortInfo{}, err
	}
	return sandbox.PortInfo{Port: port, HostAddr: hostAddr(d.podIP(ctx, r.Info.ID), port)}, nil
}

// RevokePort forgets a published port.
func (d *Driver) RevokePort(ctx context.Context, id string, port int) error {
	r, err := d.record(ctx, id)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(r.Info.Ports, func(p sandbox.PortInfo) bool { return p.Port == port }) {
		return bullpen.Errorf(bullpen.ENOTFOUND, "port %d is not published", port)
	}
	return d.update(ctx, r.Info.ID, func(in *sandbox.Info) {
		in.Ports = slices.DeleteFunc(in.Ports, func(p sandbox.PortInfo) bool { return p.Port == port })
	})
}

// ListPorts lists the published ports.
func (d *Driver) ListPorts(ctx context.Context, id string) ([]sandbox.PortInfo, error) {
	in, err := d.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return in.Ports, nil
}
