package kube

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// poolCluster is a fake clientset whose Pods run at once and honour
// resourceVersion preconditions as the apiserver does (the fake tracker
// ignores them): an update or a conditional delete with a stale
// resourceVersion gets 409 Conflict.
func poolCluster(t *testing.T) *fake.Clientset {
	t.Helper()
	c := fake.NewClientset()
	var rv atomic.Int64
	next := func() string { return strconv.FormatInt(rv.Add(1), 10) }
	current := func(ns, name string) (*corev1.Pod, error) {
		o, err := c.Tracker().Get(podsGVR, ns, name)
		if err != nil {
			return nil, err
		}
		return o.(*corev1.Pod), nil
	}
	c.PrependReactor("update", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.UpdateAction).GetObject().(*corev1.Pod)
		cur, err := current(pod.Namespace, pod.Name)
		if err != nil {
			return true, nil, err
		}
		if pod.ResourceVersion != cur.ResourceVersion {
			return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), pod.Name, nil)
		}
		pod.ResourceVersion = next()
		return false, nil, nil
	})
	c.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		da := a.(k8stesting.DeleteAction)
		pre := da.GetDeleteOptions().Preconditions
		if pre == nil || pre.ResourceVersion == nil {
			return false, nil, nil
		}
		cur, err := current(da.GetNamespace(), da.GetName())
		if err != nil {
			return true, nil, err
		}
		if cur.ResourceVersion != *pre.ResourceVersion {
			return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), da.GetName(), nil)
		}
		return false, nil, nil
	})
	c.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		pod.ResourceVersion = next()
		pod.CreationTimestamp = metav1.NewTime(time.Now())
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.2.3", ContainerStatuses: []corev1.ContainerStatus{
			{Name: container, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
		return false, nil, nil
	})
	return c
}

// poolDriver opens a replica of office o1 on c with a warm pool of size;
// the test's end closes it unless closeDriver did.
func poolDriver(t *testing.T, c *fake.Clientset, size int) *Driver {
	t.Helper()
	d, err := New(context.Background(), Config{Client: c, Namespace: testNS, Office: "o1", InitImage: "bullpen/init:1",
		HostImage: "debian:13", WarmPool: size, Sandbox: sandbox.Config{CheckInterval: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	d.exec = localExecer{}
	t.Cleanup(func() { closeDriver(d) })
	return d
}

var closed sync.Map // *Driver → true

func closeDriver(d *Driver) {
	if _, done := closed.LoadOrStore(d, true); !done {
		d.Close()
	}
}

// members lists the office's unclaimed pool Pods by sandbox id.
func members(t *testing.T, d *Driver) map[string]bool {
	t.Helper()
	l, err := d.c.CoreV1().Pods(testNS).List(context.Background(), listOpts(d.poolSelector("")))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range l.Items {
		out[p.Labels[LabelSandbox]] = true
	}
	return out
}

// waitMembers waits (up to 10 s) for the pool to hold n members.
func waitMembers(t *testing.T, d *Driver, n int) map[string]bool {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := members(t, d)
		if len(m) == n {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pool holds %d members, want %d", len(m), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWarmPoolClaim: a create with only the pooled image claims a
// member (its Pod, claim, policy and Secret become the sandbox's, the
// record written into the Secret), the pool refills, stop/start/terminate
// work on it as on a cold one; a spec the pool cannot honour (env,
// secrets, other limits) is created cold.
func TestWarmPoolClaim(t *testing.T) {
	c := poolCluster(t)
	d := poolDriver(t, c, 2)
	ctx := context.Background()
	before := waitMembers(t, d, 2)
	for id := range before {
		if got := countObjects(t, c, d, id); got != "pod 1, secret 1, claim 1, policy 1" {
			t.Errorf("pool member %s: %s", id, got)
		}
	}
	if l, err := d.List(ctx, nil); err != nil || len(l) != 0 {
		t.Errorf("List with only pool members = %v, %v; want none", l, err)
	}
	in, err := d.Create(ctx, sandbox.Spec{Name: "warm", Tags: map[string]string{"a": "b"}, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !before[in.ID] || in.Name != "warm" || in.State != sandbox.StateRunning {
		t.Fatalf("Create = %+v, want a pool member (%v) running", in, before)
	}
	pod, err := c.CoreV1().Pods(testNS).Get(ctx, objName(in.ID), metav1.GetOptions{})
	if err != nil || pod.Labels[LabelPool] != "" || pod.Annotations[AnnotationClaimed] == "" {
		t.Errorf("claimed pod labels %v annotations %v, %v", pod.Labels, pod.Annotations, err)
	}
	sec, err := c.CoreV1().Secrets(testNS).Get(ctx, objName(in.ID), metav1.GetOptions{})
	if err != nil || isPoolSecret(sec) || len(sec.Data[tokenKey]) != 64 {
		t.Errorf("claimed secret %+v, %v; want a record and the member's token", sec, err)
	}
	if g, err := d.Get(ctx, "warm"); err != nil || g.ID != in.ID || g.Tags["a"] != "b" {
		t.Errorf("Get = %+v, %v", g, err)
	}
	after := waitMembers(t, d, 2)
	if after[in.ID] {
		t.Error("the claimed pod still counts as a pool member")
	}

	for _, sp := range []sandbox.Spec{
		{Env: map[string]string{"A": "1"}},
		{Secrets: []sandbox.Secret{{Name: "S", Value: "v"}}},
		{CPU: 0.25},
		{Image: "python:3"},
		{Network: sandbox.NetworkPolicy{Allow: []string{"10.0.0.0/8"}}},
	} {
		cold, err := d.Create(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		if after[cold.ID] {
			t.Errorf("Create(%+v) claimed a pool member, want a cold create", sp)
		}
		if err := d.Terminate(ctx, cold.ID); err != nil {
			t.Fatal(err)
		}
	}
	if m := members(t, d); len(m) != 2 {
		t.Errorf("cold creates changed the pool: %v", m)
	}

	if err := d.Stop(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if got := countObjects(t, c, d, in.ID); got != "pod 0, secret 1, claim 1, policy 1" {
		t.Errorf("after Stop: %s", got)
	}
	if err := d.Start(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := d.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if g, err := d.Get(ctx, in.ID); err != nil || g.State != sandbox.StateRunning {
		t.Errorf("after Start and Reconcile: %+v, %v", g, err)
	}
	if err := d.Terminate(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if got := countObjects(t, c, d, in.ID); got != "pod 0, secret 0, claim 0, policy 0" {
		t.Errorf("after Terminate: %s", got)
	}
}

// countObjects says how many objects of each kind carry the id.
func countObjects(t *testing.T, c *fake.Clientset, d *Driver, id string) string {
	t.Helper()
	ctx, o := context.Background(), listOpts(d.selector(id))
	pods, err1 := c.CoreV1().Pods(testNS).List(ctx, o)
	secs, err2 := c.CoreV1().Secrets(testNS).List(ctx, o)
	pvcs, err3 := c.CoreV1().PersistentVolumeClaims(testNS).List(ctx, o)
	nps, err4 := c.NetworkingV1().NetworkPolicies(testNS).List(ctx, o)
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return "pod " + strconv.Itoa(len(pods.Items)) + ", secret " + strconv.Itoa(len(secs.Items)) +
		", claim " + strconv.Itoa(len(pvcs.Items)) + ", policy " + strconv.Itoa(len(nps.Items))
}

// TestWarmPoolConflict: a member another replica claimed between this
// one's List and its update is not taken twice: the conditional update
// conflicts and the next member is claimed, or, with none left, the
// create is cold.
func TestWarmPoolConflict(t *testing.T) {
	c := poolCluster(t)
	d := poolDriver(t, c, 2)
	ctx := context.Background()
	before := waitMembers(t, d, 2)
	closeDriver(d) // no refill: the test counts the members
	var stolen []string
	c.PrependReactor("update", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.UpdateAction).GetObject().(*corev1.Pod)
		if len(stolen) > 0 || pod.Annotations[AnnotationClaimed] == "" {
			return false, nil, nil
		}
		// Another replica claims this Pod first.
		o, err := c.Tracker().Get(podsGVR, testNS, pod.Name)
		if err != nil {
			return true, nil, err
		}
		other := o.(*corev1.Pod).DeepCopy()
		delete(other.Labels, LabelPool)
		other.ResourceVersion += "0"
		if err := c.Tracker().Update(podsGVR, other, testNS); err != nil {
			return true, nil, err
		}
		stolen = append(stolen, pod.Name)
		return false, nil, nil
	})
	in, err := d.Create(ctx, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stolen) != 1 || objName(in.ID) == stolen[0] || !before[in.ID] {
		t.Fatalf("Create got %s, another replica claimed %v first; want the other member of %v", in.ID, stolen, before)
	}
	cold, err := d.Create(ctx, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if objName(cold.ID) == stolen[0] || cold.ID == in.ID {
		t.Errorf("with the last member claimed by another replica, Create took %s, want a cold create", cold.ID)
	}
	if _, err := c.CoreV1().Secrets(testNS).Get(ctx, stolen[0], metav1.GetOptions{}); err != nil {
		t.Errorf("the other replica's member lost its secret: %v", err)
	}
}

// TestWarmPoolReconcile: pool members are not orphans; members beyond
// the size, of a template no longer configured, or left half made by a
// replica that died while filling or claiming (once twice the start
// timeout passed) are deleted with all their objects; a replica
// configured without a pool retires the office's pool.
func TestWarmPoolReconcile(t *testing.T) {
	c := poolCluster(t)
	d := poolDriver(t, c, 2)
	ctx := context.Background()
	kept := waitMembers(t, d, 2)
	if err := d.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if m := members(t, d); len(m) != 2 || !sameKeys(m, kept) {
		t.Fatalf("Reconcile changed a full pool: %v, was %v", m, kept)
	}
	tpl := d.pool.templates[0]
	extra := d.leftover(t, tpl.hash, time.Now(), true, time.Time{})
	old := d.leftover(t, "0ldtemplate0000", time.Now(), true, time.Time{})
	halfFilled := d.leftover(t, tpl.hash, time.Now().Add(-time.Hour), false, time.Time{})
	filling := d.leftover(t, tpl.hash, time.Now(), false, time.Time{})
	halfClaimed := d.leftover(t, tpl.hash, time.Now().Add(-time.Hour), true, time.Now().Add(-time.Hour))
	claiming := d.leftover(t, tpl.hash, time.Now().Add(-time.Hour), true, time.Now())
	if err := d.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c2 := range []struct {
		name, id, want string
	}{
		{"a member beyond the size", extra, "pod 0, secret 0, claim 0, policy 0"},
		{"a member of an old template", old, "pod 0, secret 0, claim 0, policy 0"},
		{"a fill that died an hour ago", halfFilled, "pod 0, secret 0, claim 0, policy 0"},
		{"a fill under way", filling, "pod 0, secret 1, claim 1, policy 1"},
		{"a claim that died an hour ago", halfClaimed, "pod 0, secret 0, claim 0, policy 0"},
		{"a claim under way", claiming, "pod 1, secret 1, claim 1, policy 1"},
	} {
		if got := countObjects(t, c, d, c2.id); got != c2.want {
			t.Errorf("%s: %s, want %s", c2.name, got, c2.want)
		}
	}
	if m := members(t, d); !sameKeys(m, kept) {
		t.Errorf("after Reconcile the pool holds %v, want the first members %v", m, kept)
	}

	closeDriver(d)
	off := poolDriver(t, c, 0) // the office restarted without a pool
	if m := members(t, off); len(m) != 0 {
		t.Errorf("a replica without a pool left the members %v", m)
	}
	for id := range kept {
		if got := countObjects(t, c, d, id); got != "pod 0, secret 0, claim 0, policy 0" {
			t.Errorf("retired member %s: %s", id, got)
		}
	}
}

func sameKeys(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// leftover makes the objects of a pool member of template hash made at
// since: with its Pod or without (a fill cut short), claimed at claimed
// unless that is zero (a claim whose record was never written).
func (d *Driver) leftover(t *testing.T, hash string, since time.Time, pod bool, claimed time.Time) string {
	t.Helper()
	ctx := context.Background()
	tpl := d.pool.templates[0]
	tpl.hash = hash
	id, err := d.fillOne(ctx, tpl)
	if err != nil {
		t.Fatal(err)
	}
	sel := listOpts(d.selector(id))
	stamp := since.UTC().Format(time.RFC3339Nano)
	secs, _ := d.c.CoreV1().Secrets(testNS).List(ctx, sel)
	pvcs, _ := d.c.CoreV1().PersistentVolumeClaims(testNS).List(ctx, sel)
	nps, _ := d.c.NetworkingV1().NetworkPolicies(testNS).List(ctx, sel)
	for i := range secs.Items {
		secs.Items[i].Annotations[AnnotationPoolSince] = stamp
		d.c.CoreV1().Secrets(testNS).Update(ctx, &secs.Items[i], metav1.UpdateOptions{})
	}
	for i := range pvcs.Items {
		pvcs.Items[i].Annotations[AnnotationPoolSince] = stamp
		d.c.CoreV1().PersistentVolumeClaims(testNS).Update(ctx, &pvcs.Items[i], metav1.UpdateOptions{})
	}
	for i := range nps.Items {
		nps.Items[i].Annotations[AnnotationPoolSince] = stamp
		d.c.NetworkingV1().NetworkPolicies(testNS).Update(ctx, &nps.Items[i], metav1.UpdateOptions{})
	}
	p, err := d.c.CoreV1().Pods(testNS).Get(ctx, objName(id), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case !pod:
		err = d.c.CoreV1().Pods(testNS).Delete(ctx, p.Name, metav1.DeleteOptions{})
	case !claimed.IsZero():
		delete(p.Labels, LabelPool)
		p.Annotations[AnnotationClaimed] = claimed.UTC().Format(time.RFC3339Nano)
		_, err = d.c.CoreV1().Pods(testNS).Update(ctx, p, metav1.UpdateOptions{})
	default:
		p.Annotations[AnnotationPoolSince] = stamp
		_, err = d.c.CoreV1().Pods(testNS).Update(ctx, p, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return id
}
