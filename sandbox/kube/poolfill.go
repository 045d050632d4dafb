package kube

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// poolLoop refills the pool when kicked (after a claim, a retirement or
// a member's loss) and every ReconcileInterval.
func (d *Driver) poolLoop() {
	defer d.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-d.stop; cancel() }()
	t := time.NewTicker(d.cfg.ReconcileInterval)
	defer t.Stop()
	for {
		d.fill(ctx)
		select {
		case <-ctx.Done():
			return
		case <-d.pool.kick:
		case <-t.C:
		}
	}
}

// fill brings each template's pool up to its size, one member at a time,
// each after a fresh count: replicas filling at once overshoot by at most
// one member each, which the next Reconcile retires.
func (d *Driver) fill(ctx context.Context) {
	for _, t := range d.pool.templates {
		for range d.pool.size {
			n, err := d.poolCount(ctx, t.hash)
			if err != nil || n >= d.pool.size {
				if err != nil && ctx.Err() == nil {
					d.log.Warn("kube: count the warm pool", "err", err)
				}
				break
			}
			if _, err := d.fillOne(ctx, t); err != nil {
				if ctx.Err() == nil {
					d.log.Warn("kube: make a warm pool member", "err", err)
				}
				break
			}
		}
	}
}

// poolCount counts a template's members that are or will be running.
func (d *Driver) poolCount(ctx context.Context, hash string) (int, error) {
	l, err := d.c.CoreV1().Pods(d.ns).List(ctx, metav1.ListOptions{LabelSelector: d.poolSelector(hash)})
	if err != nil {
		return 0, err
	}
	return len(candidates(l.Items)), nil
}

// fillOne makes one member: the objects of a cold create, marked as the
// pool's, its Secret holding its token but no record yet; it returns the
// member's sandbox id. A failure deletes what it made.
func (d *Driver) fillOne(ctx context.Context, t template) (string, error) {
	r := t.rec.clone()
	r.Info.ID = newID()
	since := d.cfg.Sandbox.Now().UTC().Format(time.RFC3339Nano)
	mark := func(m *metav1.ObjectMeta) {
		m.Labels[LabelPool] = t.hash
		m.Annotations = map[string]string{AnnotationPoolSince: since}
	}
	sec, pvc, np, pod := d.secretObject(r, nil, randHex(32)), d.claimObject(r), d.policyObject(r), d.podObject(r, t.image)
	for _, m := range []*metav1.ObjectMeta{&sec.ObjectMeta, &pvc.ObjectMeta, &np.ObjectMeta, &pod.ObjectMeta} {
		mark(m)
	}
	_, err := d.c.CoreV1().Secrets(d.ns).Create(ctx, sec, metav1.CreateOptions{})
	if err == nil {
		_, err = d.c.CoreV1().PersistentVolumeClaims(d.ns).Create(ctx, pvc, metav1.CreateOptions{})
	}
	if err == nil {
		_, err = d.c.NetworkingV1().NetworkPolicies(d.ns).Create(ctx, np, metav1.CreateOptions{})
	}
	if err == nil {
		_, err = d.c.CoreV1().Pods(d.ns).Create(ctx, pod, metav1.CreateOptions{})
	}
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := d.deleteAll(cctx, r.Info.ID); derr != nil {
			d.log.Warn("kube: clean up a failed warm pool member", "sandbox", r.Info.ID, "err", derr)
		}
		return "", err
	}
	return r.Info.ID, nil
}

// trimPool retires the office's pool members of templates no longer
// configured, those that will never run, and those beyond the pool's
// size (not running first, then the newest). Reconcile runs it.
func (d *Driver) trimPool(ctx context.Context) error {
	l, err := d.c.CoreV1().Pods(d.ns).List(ctx, metav1.ListOptions{LabelSelector: d.poolSelector("")})
	if err != nil {
		return err
	}
	byHash := map[string][]corev1.Pod{}
	retired := 0
	for _, p := range l.Items {
		switch {
		case p.DeletionTimestamp != nil:
		case d.pool.size <= 0 || d.pool.template(p.Labels[LabelPool]) == nil || broken(&p) || p.Labels[LabelSandbox] == "":
			retired += d.retire(ctx, &p)
		default:
			byHash[p.Labels[LabelPool]] = append(byHash[p.Labels[LabelPool]], p)
		}
	}
	for _, ps := range byHash {
		ps = candidates(ps) // running, oldest first: the extras are at the end
		for i := d.pool.size; i < len(ps); i++ {
			retired += d.retire(ctx, &ps[i])
		}
	}
	if retired > 0 || d.pool.size > 0 {
		d.kickFill()
	}
	return nil
}

// retire deletes a pool member unless it was claimed meanwhile (the
// delete is conditional on the Pod's resourceVersion); it returns 1 if it
// did.
func (d *Driver) retire(ctx context.Context, p *corev1.Pod) int {
	rv, uid := p.ResourceVersion, p.UID
	err := d.c.CoreV1().Pods(d.ns).Delete(ctx, p.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{ResourceVersion: &rv, UID: &uid}})
	if apierrors.IsConflict(err) {
		return 0 // claimed: a sandbox now
	}
	if err != nil && !apierrors.IsNotFound(err) {
		d.log.Warn("kube: retire a warm pool pod", "pod", p.Name, "err", err)
		return 0
	}
	id := p.Labels[LabelSandbox]
	d.log.Info("kube: retire a warm pool member", "pod", p.Name, "template", p.Labels[LabelPool])
	if id != "" {
		if err := d.deleteAll(ctx, id); err != nil {
			d.log.Warn("kube: retire a warm pool member", "sandbox", id, "err", err)
		}
	}
	return 1
}

// poolHeld says whether objects of an id with no record are the pool's
// business rather than orphans: an unclaimed member's, or those of a
// fill or a claim younger than twice the start timeout (a replica that
// died in either leaves them older, and they are deleted).
func (d *Driver) poolHeld(kind string, m metav1.ObjectMeta) bool {
	if kind == "pod" && m.Labels[LabelPool] != "" {
		return true
	}
	young := func(key string) bool {
		t, err := time.Parse(time.RFC3339Nano, m.Annotations[key])
		return err == nil && d.cfg.Sandbox.Now().Sub(t) < 2*d.cfg.StartTimeout
	}
	return young(AnnotationClaimed) || m.Labels[LabelPool] != "" && young(AnnotationPoolSince)
}
