package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Reconcile makes the cluster agree with the records: objects of the
// office whose sandbox has no record are deleted, sandboxes left half
// made by a crashed create (older than twice the start timeout) and those
// a crashed terminate left are deleted, running sandboxes whose Pod
// vanished are marked stopped with a "crashed" event ("lost"), and the
// warm pool is trimmed (trimPool). New runs it; so does every (re)start
// of the watch.
func (d *Driver) Reconcile(ctx context.Context) error {
	if err := d.load(ctx); err != nil {
		return err
	}
	d.mu.Lock()
	known := make(map[string]*record, len(d.recs))
	for id, r := range d.recs {
		known[id] = r.clone()
	}
	d.mu.Unlock()
	owners, err := d.ownersInCluster(ctx)
	if err != nil {
		return err
	}
	for id, kinds := range owners {
		if known[id] == nil && !kinds["pool"] && !d.hasRecord(ctx, id) {
			d.log.Info("kube: delete the objects of an unknown sandbox", "sandbox", id)
			if err := d.deleteAll(ctx, id); err != nil {
				return err
			}
		}
	}
	now := d.cfg.Sandbox.Now()
	for id, r := range known {
		switch {
		case r.Info.State == sandbox.StateTerminated && !r.stopping:
			// A terminate that did not finish (its replica died).
			if err := d.deleteAll(ctx, id); err != nil {
				return err
			}
			d.drop(id)
		case r.Creating && now.Sub(r.Info.CreatedAt) > 2*d.cfg.StartTimeout:
			d.log.Info("kube: delete a sandbox whose create never finished", "sandbox", id)
			if err := d.deleteAll(ctx, id); err != nil {
				return err
			}
			d.drop(id)
		case !r.Creating && r.Info.State == sandbox.StateRunning && !owners[id]["pod"] && !r.stopping:
			d.lost(ctx, id)
		}
	}
	if err := d.trimPool(ctx); err != nil {
		return fmt.Errorf("kube: the warm pool: %w", err)
	}
	return nil
}

// hasRecord says whether the sandbox's Secret exists now with a record
// (a warm pool member's has none): a create that began after the records
// were read has made it before anything else.
func (d *Driver) hasRecord(ctx context.Context, id string) bool {
	sec, err := d.c.CoreV1().Secrets(d.ns).Get(ctx, objName(id), metav1.GetOptions{})
	if err != nil {
		return !apierrors.IsNotFound(err)
	}
	return !isPoolSecret(sec)
}

// ownersInCluster returns, per sandbox id, the kinds of object labelled
// with it (the Secrets aside), and "pool" for the warm pool's.
func (d *Driver) ownersInCluster(ctx context.Context) (map[string]map[string]bool, error) {
	sel := metav1.ListOptions{LabelSelector: d.selector("")}
	out := map[string]map[string]bool{}
	add := func(kind string, m metav1.ObjectMeta) {
		id := m.Labels[LabelSandbox]
		if id == "" || m.DeletionTimestamp != nil {
			return // being deleted already
		}
		if out[id] == nil {
			out[id] = map[string]bool{}
		}
		out[id][kind] = true
		if d.poolHeld(kind, m) {
			out[id]["pool"] = true
		}
	}
	pods, err := d.c.CoreV1().Pods(d.ns).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("kube: list pods: %w", err)
	}
	for _, o := range pods.Items {
		add("pod", o.ObjectMeta)
	}
	nps, err := d.c.NetworkingV1().NetworkPolicies(d.ns).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("kube: list network policies: %w", err)
	}
	for _, o := range nps.Items {
		add("networkpolicy", o.ObjectMeta)
	}
	svcs, err := d.c.CoreV1().Services(d.ns).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("kube: list services: %w", err)
	}
	for _, o := range svcs.Items {
		add("service", o.ObjectMeta)
	}
	pvcs, err := d.c.CoreV1().PersistentVolumeClaims(d.ns).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("kube: list claims: %w", err)
	}
	for _, o := range pvcs.Items {
		add("claim", o.ObjectMeta)
	}
	return out, nil
}

var errNotLost = errors.New("kube: not lost")

// lost marks a running sandbox whose Pod vanished as stopped: its
// workspace is kept and Start makes a new Pod.
func (d *Driver) lost(ctx context.Context, id string) {
	err := d.updateRecord(ctx, id, func(r *record) error {
		if r.Creating || r.Info.State != sandbox.StateRunning {
			return errNotLost // stopped or terminated meanwhile, by any replica
		}
		r.Info.State = sandbox.StateStopped
		return nil
	})
	if errors.Is(err, errNotLost) || bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return
	}
	if err != nil {
		d.log.Warn("kube: mark a lost sandbox", "sandbox", id, "err", err)
		return
	}
	d.log.Warn("kube: a sandbox's pod vanished; it is stopped", "sandbox", id)
	d.emit(sandbox.EventCrashed, id, "lost: its pod vanished")
}

// watchLoop watches the office's Pods: a Pod deleted while its sandbox
// runs (not by this replica) is a lost sandbox. Each (re)start of the
// watch reconciles first, so nothing missed in between stays missed.
func (d *Driver) watchLoop() {
	defer d.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-d.stop; cancel() }()
	first := true
	for ctx.Err() == nil {
		if !first {
			if err := d.Reconcile(ctx); err != nil && ctx.Err() == nil {
				d.log.Warn("kube: reconcile", "err", err)
			}
		}
		first = false
		w, err := d.c.CoreV1().Pods(d.ns).Watch(ctx, metav1.ListOptions{LabelSelector: d.selector("")})
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
			continue
		}
		drain(ctx, w, func(ev watch.Event) { d.onPod(ctx, ev) })
	}
}

// onPod marks a running sandbox whose Pod was deleted (not by a stop or
// a terminate of ours, nor during its create) as lost.
func (d *Driver) onPod(ctx context.Context, ev watch.Event) {
	pod, isPod := ev.Object.(*corev1.Pod)
	if !isPod || ev.Type != watch.Deleted {
		return
	}
	if pod.Labels[LabelPool] != "" {
		d.kickFill() // a member went: make another
		return
	}
	id := pod.Labels[LabelSandbox]
	r := d.cached(id)
	if r == nil || r.stopping || r.Creating || r.Info.State != sandbox.StateRunning {
		return
	}
	d.lost(ctx, id)
}

// timeoutLoop terminates sandboxes whose lifetime passed and applies the
// idle action to those idle too long (activity as every replica saw it:
// activity.go),
// and reconciles every ReconcileInterval.
func (d *Driver) timeoutLoop() {
	defer d.wg.Done()
	t := time.NewTicker(d.cfg.Sandbox.CheckInterval)
	defer t.Stop()
	rt := time.NewTicker(d.cfg.ReconcileInterval)
	defer rt.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.checkTimeouts()
		case <-rt.C:
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if err := d.Reconcile(ctx); err != nil {
				d.log.Warn("kube: reconcile", "err", err)
			}
			cancel()
		}
	}
}

func (d *Driver) checkTimeouts() {
	now := d.cfg.Sandbox.Now()
	d.mu.Lock()
	var expired, idle []*record
	for _, r := range d.recs {
		in := r.Info
		switch {
		case r.Creating || r.stopping || in.State == sandbox.StateTerminated:
		case !in.ExpiresAt.IsZero() && now.After(in.ExpiresAt):
			expired = append(expired, r.clone())
		case in.State == sandbox.StateRunning && in.IdleTimeout > 0 && now.Sub(in.LastActivity) > in.IdleTimeout:
			idle = append(idle, r.clone())
		}
	}
	d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, r := range expired {
		if err := d.Terminate(ctx, r.Info.ID); err == nil {
			d.emit(sandbox.EventTimedOut, r.Info.ID, "timeout")
		} else if !apierrors.IsNotFound(err) {
			d.log.Warn("kube: terminate an expired sandbox", "sandbox", r.Info.ID, "err", err)
		}
	}
	for _, r := range idle {
		if !d.stillIdle(ctx, r.Info.ID) {
			continue
		}
		var err error
		if r.Info.IdleAction == sandbox.IdleTerminate {
			err = d.Terminate(ctx, r.Info.ID)
		} else {
			err = d.Stop(ctx, r.Info.ID)
		}
		if err == nil {
			d.emit(sandbox.EventTimedOut, r.Info.ID, "idle")
		}
	}
}
