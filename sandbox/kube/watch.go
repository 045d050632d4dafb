package kube

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// recordsLoop keeps the cache of records current with the Secrets'
// watch: what another replica did (a create, a stop, a terminate) shows
// here without a List.
func (d *Driver) recordsLoop() {
	defer d.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-d.stop; cancel() }()
	for ctx.Err() == nil {
		w, err := d.c.CoreV1().Secrets(d.ns).Watch(ctx, metav1.ListOptions{LabelSelector: d.selector("")})
		if err == nil {
			drain(ctx, w, d.onRecord)
			if err := d.load(ctx); err != nil && ctx.Err() == nil { // what the gap missed
				d.log.Warn("kube: reload the records", "err", err)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// drain hands each event of w to on until ctx ends or the watch closes,
// then stops w.
func drain(ctx context.Context, w watch.Interface, on func(watch.Event)) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			on(ev)
		}
	}
}

// onRecord applies one event of the records' watch to the cache.
func (d *Driver) onRecord(ev watch.Event) {
	sec, isSecret := ev.Object.(*corev1.Secret)
	if !isSecret {
		return
	}
	switch ev.Type {
	case watch.Deleted:
		if id := sec.Labels[LabelSandbox]; id != "" {
			d.drop(id)
		}
	case watch.Added, watch.Modified:
		if r, err := recordOf(sec); err == nil {
			d.mu.Lock()
			d.mergeLocked(r)
			d.mu.Unlock()
		}
	}
}
