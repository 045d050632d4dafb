package kube

import (
	"context"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// withSnapshots gives the fake cluster a VolumeSnapshot API (served
// true) and the driver a dynamic client on it.
func withSnapshots(f *fakeCluster, served bool) *dynamicfake.FakeDynamicClient {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{snapGVR: "VolumeSnapshotList"})
	f.d.dyn = dyn
	if served {
		f.c.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
			GroupVersion: snapGVR.GroupVersion().String(),
			APIResources: []metav1.APIResource{{Name: "volumesnapshots", Namespaced: true, Kind: "VolumeSnapshot"}},
		}}
	}
	return dyn
}

func snapshotCount(t *testing.T, dyn *dynamicfake.FakeDynamicClient) int {
	t.Helper()
	l, err := dyn.Resource(snapGVR).Namespace(testNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(l.Items)
}

// Without the VolumeSnapshot API a snapshot, and a create from one, are
// refused with a message naming the driver and what is missing, and
// nothing is made.
func TestSnapshotRefusedWithoutTheAPI(t *testing.T) {
	f := newFake(t)
	ctx := context.Background()
	in, err := f.d.Create(ctx, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	dyn := withSnapshots(f, false)
	_, err = f.d.Snapshot(ctx, in.ID, "s1")
	if !bullpen.IsCode(err, bullpen.EUNSUPPORTED) || !strings.Contains(err.Error(), "kubernetes driver") ||
		!strings.Contains(err.Error(), "VolumeSnapshot") {
		t.Fatalf("snapshot without the API: %v", err)
	}
	if _, err := f.d.Create(ctx, sandbox.Spec{Image: "snapshot/s1"}); !bullpen.IsCode(err, bullpen.EUNSUPPORTED) {
		t.Fatalf("create from a snapshot without the API: %v", err)
	}
	if n := snapshotCount(t, dyn); n != 0 {
		t.Fatalf("%d snapshots made", n)
	}
	if l, _ := f.c.CoreV1().Pods(testNS).List(ctx, metav1.ListOptions{}); len(l.Items) != 1 {
		t.Fatalf("%d pods, want the first sandbox's only", len(l.Items))
	}
	f.d.dyn = nil
	if _, err := f.d.Snapshot(ctx, in.ID, "s1"); !bullpen.IsCode(err, bullpen.EUNSUPPORTED) {
		t.Fatalf("snapshot without a dynamic client: %v", err)
	}
}

// With the API a snapshot is a VolumeSnapshot of the workspace claim; a
// create from it waits for it to be ready, then restores a new claim from
// it and runs the snapshotted sandbox's image.
func TestSnapshotAndCreateFromIt(t *testing.T) {
	f := newFake(t)
	f.d.cfg.SnapshotClassName = "csi-snaps"
	ctx := context.Background()
	src, err := f.d.Create(ctx, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	dyn := withSnapshots(f, true)
	for _, bad := range []string{"", "a/b", "-x", strings.Repeat("n", 64)} {
		if _, err := f.d.Snapshot(ctx, src.ID, bad); !bullpen.IsCode(err, bullpen.EINVALID) {
			t.Fatalf("snapshot named %q: %v", bad, err)
		}
	}
	if _, err := f.d.Snapshot(ctx, "sb_0000000000000000", "s1"); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		t.Fatalf("snapshot of no sandbox: %v", err)
	}
	if n := snapshotCount(t, dyn); n != 0 {
		t.Fatalf("bad snapshots made %d objects", n)
	}
	ref, err := f.d.Snapshot(ctx, src.ID, "Before_Deploy.1")
	if err != nil || ref != "snapshot/Before_Deploy.1" {
		t.Fatalf("snapshot: %q, %v", ref, err)
	}
	if _, err := f.d.Snapshot(ctx, src.ID, "Before_Deploy.1"); !bullpen.IsCode(err, bullpen.ECONFLICT) {
		t.Fatalf("second snapshot of that name: %v", err)
	}
	obj := onlySnapshot(t, dyn)
	if pvc, _, _ := unstructured.NestedString(obj.Object, "spec", "source", "persistentVolumeClaimName"); pvc != objName(src.ID)+wsSuffix {
		t.Fatalf("snapshot source %q", pvc)
	}
	if cls, _, _ := unstructured.NestedString(obj.Object, "spec", "volumeSnapshotClassName"); cls != "csi-snaps" {
		t.Fatalf("snapshot class %q", cls)
	}
	if obj.GetLabels()[LabelSnapshot] != "Before_Deploy.1" || obj.GetLabels()[LabelOffice] != "o1" || obj.GetLabels()[LabelSandbox] != "" {
		t.Fatalf("snapshot labels %v", obj.GetLabels())
	}

	pods := func() int {
		l, _ := f.c.CoreV1().Pods(testNS).List(ctx, metav1.ListOptions{})
		return len(l.Items)
	}
	if _, err := f.d.Create(ctx, sandbox.Spec{Image: ref}); !bullpen.IsCode(err, bullpen.EUNAVAILABLE) || pods() != 1 {
		t.Fatalf("create from a snapshot not ready: %v (%d pods)", err, pods())
	}
	if _, err := f.d.Create(ctx, sandbox.Spec{Image: "snapshot/nope"}); !bullpen.IsCode(err, bullpen.ENOTFOUND) || pods() != 1 {
		t.Fatalf("create from a missing snapshot: %v (%d pods)", err, pods())
	}
	if err := unstructured.SetNestedField(obj.Object, true, "status", "readyToUse"); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(snapGVR).Namespace(testNS).Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	in, err := f.d.Create(ctx, sandbox.Spec{Image: ref})
	if err != nil {
		t.Fatal(err)
	}
	if in.Image != ref {
		t.Fatalf("image %q, want %q", in.Image, ref)
	}
	pvc, err := f.c.CoreV1().PersistentVolumeClaims(testNS).Get(ctx, objName(in.ID)+wsSuffix, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds := pvc.Spec.DataSourceRef; ds == nil || ds.Kind != "VolumeSnapshot" || ds.Name != obj.GetName() || ds.APIGroup == nil || *ds.APIGroup != snapGroup {
		t.Fatalf("claim data source %+v", ds)
	}
	checkImage := func(what string) {
		t.Helper()
		pod, err := f.c.CoreV1().Pods(testNS).Get(ctx, objName(in.ID), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if img := pod.Spec.Containers[0].Image; img != "debian:13" {
			t.Fatalf("%s: pod image %q, want the snapshotted sandbox's (debian:13)", what, img)
		}
	}
	checkImage("create")
	if err := f.d.Stop(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.d.Start(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	checkImage("start")
	// A snapshot outlives its sandbox, as an image does.
	if err := f.d.Terminate(ctx, src.ID); err != nil {
		t.Fatal(err)
	}
	if n := snapshotCount(t, dyn); n != 1 {
		t.Fatalf("%d snapshots after terminating their sandbox", n)
	}
}

func onlySnapshot(t *testing.T, dyn *dynamicfake.FakeDynamicClient) *unstructured.Unstructured {
	t.Helper()
	l, err := dyn.Resource(snapGVR).Namespace(testNS).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("snapshots: %v, %v", l, err)
	}
	return &l.Items[0]
}
