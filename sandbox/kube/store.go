package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/bullpen-hq/bullpen/sandbox"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// put caches a record.
func (d *Driver) put(r *record) {
	d.mu.Lock()
	d.recs[r.Info.ID] = r
	d.mu.Unlock()
}

// mergeLocked caches a record read from the cluster unless the cache
// holds a later one, keeping what only this replica knows (its stop in
// progress, the activity it saw). d.mu is held.
func (d *Driver) mergeLocked(r *record) {
	old := d.recs[r.Info.ID]
	if old == nil {
		d.recs[r.Info.ID] = r
		return
	}
	if !old.newer(r.version) {
		return
	}
	r.stopping, r.saved = old.stopping, old.saved
	if old.Info.LastActivity.After(r.Info.LastActivity) {
		r.Info.LastActivity = old.Info.LastActivity // kept in memory only
	}
	d.recs[r.Info.ID] = r
}

// drop forgets a sandbox.
func (d *Driver) drop(id string) {
	d.mu.Lock()
	delete(d.recs, id)
	d.mu.Unlock()
}

func (d *Driver) setStopping(id string, on bool) {
	d.mu.Lock()
	if r := d.recs[id]; r != nil {
		r.stopping = on
	}
	d.mu.Unlock()
}

// cached returns a copy of the cached record of an id or a name.
func (d *Driver) cached(idOrName string) *record {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r := d.recs[idOrName]; r != nil {
		return r.clone()
	}
	for _, r := range d.recs {
		if r.Info.Name != "" && r.Info.Name == idOrName {
			return r.clone()
		}
	}
	return nil
}

// record finds a sandbox by id or name: in the cache, else in the
// cluster (another replica made it).
func (d *Driver) record(ctx context.Context, idOrName string) (*record, error) {
	r := d.cached(idOrName)
	if r == nil {
		if err := d.load(ctx); err != nil {
			return nil, err
		}
		r = d.cached(idOrName)
	}
	if r == nil || r.Info.State == sandbox.StateTerminated {
		return nil, notFound(idOrName)
	}
	return r, nil
}

// load reads every record of the office from the cluster into the cache
// and forgets the sandboxes whose Secret is gone.
func (d *Driver) load(ctx context.Context) error {
	secs, err := d.c.CoreV1().Secrets(d.ns).List(ctx, metav1.ListOptions{LabelSelector: d.selector("")})
	if err != nil {
		return fmt.Errorf("kube: list the sandboxes: %w", err)
	}
	seen := map[string]bool{}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range secs.Items {
		if isPoolSecret(&secs.Items[i]) {
			continue
		}
		r, err := recordOf(&secs.Items[i])
		if err != nil {
			d.log.Warn("kube: skip a secret", "secret", secs.Items[i].Name, "err", err)
			continue
		}
		seen[r.Info.ID] = true
		d.mergeLocked(r)
	}
	for id := range d.recs {
		if !seen[id] {
			delete(d.recs, id)
		}
	}
	return nil
}

// update changes a sandbox's record in its Secret (retrying on a
// conflicting write) and in the cache.
func (d *Driver) update(ctx context.Context, id string, fn func(*sandbox.Info)) error {
	return d.updateRecord(ctx, id, func(r *record) error { fn(&r.Info); return nil })
}

// updateRecord is update of the whole record, read fresh from the
// cluster; an error from fn leaves it as it is and is returned.
func (d *Driver) updateRecord(ctx context.Context, id string, fn func(*record) error) error {
	for range 5 {
		sec, err := d.c.CoreV1().Secrets(d.ns).Get(ctx, objName(id), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			d.drop(id)
			return notFound(id)
		}
		if err != nil {
			return fmt.Errorf("kube: read the record of %s: %w", id, err)
		}
		r, err := recordOf(sec)
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
		sec.Annotations[AnnotationRecord] = r.encode()
		upd, err := d.c.CoreV1().Secrets(d.ns).Update(ctx, sec, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("kube: write the record of %s: %w", id, err)
		}
		r.version = upd.ResourceVersion
		d.mu.Lock()
		d.mergeLocked(r)
		d.mu.Unlock()
		return nil
	}
	return fmt.Errorf("kube: write the record of %s: too many conflicting writes", id)
}

// Get returns a sandbox by id or name.
func (d *Driver) Get(ctx context.Context, idOrName string) (sandbox.Info, error) {
	r, err := d.record(ctx, idOrName)
	if err != nil {
		return sandbox.Info{}, err
	}
	return d.info(ctx, r), nil
}

// info is the record as Info, its ports' addresses the Pod's IP.
func (d *Driver) info(ctx context.Context, r *record) sandbox.Info {
	in := r.Info
	if len(in.Ports) > 0 && in.State == sandbox.StateRunning {
		ip := d.podIP(ctx, in.ID)
		for i := range in.Ports {
			in.Ports[i].HostAddr = hostAddr(ip, in.Ports[i].Port)
		}
	}
	return in
}

// List returns the office's sandboxes whose tags include tags, read
// from the cluster, oldest first.
func (d *Driver) List(ctx context.Context, tags map[string]string) ([]sandbox.Info, error) {
	if err := d.load(ctx); err != nil {
		return nil, err
	}
	d.mu.Lock()
	var rs []*record
	for _, r := range d.recs {
		if r.Info.State != sandbox.StateTerminated && hasTags(r.Info.Tags, tags) {
			rs = append(rs, r.clone())
		}
	}
	d.mu.Unlock()
	sort.Slice(rs, func(i, j int) bool { return rs[i].Info.CreatedAt.Before(rs[j].Info.CreatedAt) })
	out := make([]sandbox.Info, 0, len(rs))
	for _, r := range rs {
		out = append(out, d.info(ctx, r))
	}
	return out, nil
}

func hasTags(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// deleteAll deletes every object labelled with the sandbox (every object
// of the office when id is ""): Pods, NetworkPolicies, Services, claims
// and, last, the Secrets that hold the records.
func (d *Driver) deleteAll(ctx context.Context, id string) error {
	sel := metav1.ListOptions{LabelSelector: d.selector(id)}
	var errs []error
	del := func(kind string, names []string, fn func(string) error) {
		for _, n := range names {
			if err := fn(n); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("kube: delete %s %s: %w", kind, n, err))
			}
		}
	}
	opt := metav1.DeleteOptions{}
	core, netw := d.c.CoreV1(), d.c.NetworkingV1()
	if l, err := core.Pods(d.ns).List(ctx, sel); err == nil {
		del("pod", podNames(l.Items), func(n string) error { return core.Pods(d.ns).Delete(ctx, n, opt) })
	} else {
		errs = append(errs, err)
	}
	if l, err := netw.NetworkPolicies(d.ns).List(ctx, sel); err == nil {
		for _, o := range l.Items {
			del("network policy", []string{o.Name}, func(n string) error { return netw.NetworkPolicies(d.ns).Delete(ctx, n, opt) })
		}
	} else {
		errs = append(errs, err)
	}
	if l, err := core.Services(d.ns).List(ctx, sel); err == nil {
		for _, o := range l.Items {
			del("service", []string{o.Name}, func(n string) error { return core.Services(d.ns).Delete(ctx, n, opt) })
		}
	} else {
		errs = append(errs, err)
	}
	if l, err := core.PersistentVolumeClaims(d.ns).List(ctx, sel); err == nil {
		for _, o := range l.Items {
			del("claim", []string{o.Name}, func(n string) error { return core.PersistentVolumeClaims(d.ns).Delete(ctx, n, opt) })
		}
	} else {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		// The records go last: a crash before this leaves a sandbox
		// that the next reconciliation still knows and can terminate.
		if l, err := core.Secrets(d.ns).List(ctx, sel); err == nil {
			for _, o := range l.Items {
				del("secret", []string{o.Name}, func(n string) error { return core.Secrets(d.ns).Delete(ctx, n, opt) })
			}
		} else {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func podNames(ps []corev1.Pod) []string {
	out := make([]string, len(ps))
	for i := range ps {
		out[i] = ps[i].Name
	}
	return out
}
