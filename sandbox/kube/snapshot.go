package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Snapshots are CSI VolumeSnapshots of a sandbox's workspace claim, where
// the cluster serves the snapshot.storage.k8s.io/v1 API; elsewhere they
// are refused. A snapshot named N is the image reference "snapshot/N": a
// create from it gets a new claim restored from the snapshot (the claim's
// dataSource) and the image the snapshotted sandbox ran. Files outside the
// workdir are not in it: they lived in the container's writable layer, as
// they are lost at a stop.

// SnapshotPrefix starts the image reference of a snapshot.
const SnapshotPrefix = "snapshot/"

// Labels and annotations of the driver's VolumeSnapshots.
const (
	LabelSnapshot   = "bullpen.dev/snapshot" // the snapshot's name
	AnnotationImage = "bullpen.dev/image"    // the image the sandbox ran
	snapGroup       = "snapshot.storage.k8s.io"
)

var snapGVR = schema.GroupVersionResource{Group: snapGroup, Version: "v1", Resource: "volumesnapshots"}

// snapshotObjName is the VolumeSnapshot's name: snapshot names may hold
// upper case and "_", and offices may share a namespace.
func (d *Driver) snapshotObjName(name string) string {
	sum := sha256.Sum256([]byte(d.cfg.Office + "/" + name))
	return "bullpen-snap-" + hex.EncodeToString(sum[:8])
}

// snapshotAPI reports whether the cluster serves VolumeSnapshots, and
// refuses clearly when it does not (or when no client for them is set).
func (d *Driver) snapshotAPI() error {
	if d.dyn == nil {
		return refuse("snapshot a sandbox: no client for the VolumeSnapshot API is configured")
	}
	rl, err := d.c.Discovery().ServerResourcesForGroupVersion(snapGVR.GroupVersion().String())
	if err != nil {
		if apierrors.IsNotFound(err) {
			return refuse("snapshot a sandbox: the cluster serves no VolumeSnapshot API (" + snapGVR.GroupVersion().String() + "; install the CSI snapshot CRDs and controller)")
		}
		return fmt.Errorf("kube: discover the VolumeSnapshot API: %w", err)
	}
	for _, r := range rl.APIResources {
		if r.Name == snapGVR.Resource {
			return nil
		}
	}
	return refuse("snapshot a sandbox: the cluster serves no VolumeSnapshots in " + snapGVR.GroupVersion().String())
}

// Snapshot takes a CSI VolumeSnapshot of the sandbox's workspace claim
// and returns its image reference, "snapshot/<name>". It does not wait
// for the snapshot to be ready: a create from it does.
func (d *Driver) Snapshot(ctx context.Context, id, name string) (string, error) {
	if !nameRe.MatchString(name) {
		return "", invalid("invalid snapshot name %q: 1-63 of [a-zA-Z0-9_.-]", name)
	}
	if err := d.snapshotAPI(); err != nil {
		return "", err
	}
	r, err := d.record(ctx, id)
	if err != nil {
		return "", err
	}
	if r.Info.State == sandbox.StateTerminated {
		return "", notFound(id)
	}
	labels := map[string]any{LabelManagedBy: ManagedBy, LabelOffice: d.cfg.Office, LabelSnapshot: name}
	spec := map[string]any{"source": map[string]any{"persistentVolumeClaimName": objName(r.Info.ID) + wsSuffix}}
	if d.cfg.SnapshotClassName != "" {
		spec["volumeSnapshotClassName"] = d.cfg.SnapshotClassName
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": snapGVR.GroupVersion().String(), "kind": "VolumeSnapshot",
		"metadata": map[string]any{"name": d.snapshotObjName(name), "namespace": d.ns, "labels": labels,
			"annotations": map[string]any{AnnotationImage: r.Info.Image}},
		"spec": spec,
	}}
	_, err = d.dyn.Resource(snapGVR).Namespace(d.ns).Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return "", bullpen.Errorf(bullpen.ECONFLICT, "a snapshot named %q exists already", name)
	}
	if err != nil {
		return "", fmt.Errorf("kube: create the snapshot %q of %s: %w", name, id, err)
	}
	return SnapshotPrefix + name, nil
}

// fromSnapshot resolves a create's image when it names a snapshot: the
// image the snapshotted sandbox ran, and the VolumeSnapshot the claim is
// restored from. ok is false for any other image.
func (d *Driver) fromSnapshot(ctx context.Context, ref string) (image, snap string, ok bool, err error) {
	name, ok := strings.CutPrefix(ref, SnapshotPrefix)
	if !ok {
		return "", "", false, nil
	}
	if !nameRe.MatchString(name) {
		return "", "", true, invalid("invalid snapshot name %q", name)
	}
	if err := d.snapshotAPI(); err != nil {
		return "", "", true, err
	}
	obj, err := d.dyn.Resource(snapGVR).Namespace(d.ns).Get(ctx, d.snapshotObjName(name), metav1.GetOptions{})
	if apierrors.IsNotFound(err) || err == nil && obj.GetLabels()[LabelSnapshot] != name {
		return "", "", true, bullpen.Errorf(bullpen.ENOTFOUND, "snapshot %q not found", name)
	}
	if err != nil {
		return "", "", true, fmt.Errorf("kube: read the snapshot %q: %w", name, err)
	}
	if msg, _, _ := unstructured.NestedString(obj.Object, "status", "error", "message"); msg != "" {
		return "", "", true, bullpen.Errorf(bullpen.EUNAVAILABLE, "snapshot %q failed: %s", name, msg)
	}
	if ready, _, _ := unstructured.NestedBool(obj.Object, "status", "readyToUse"); !ready {
		return "", "", true, bullpen.Errorf(bullpen.EUNAVAILABLE, "snapshot %q is not ready yet; try again in a moment", name)
	}
	image = obj.GetAnnotations()[AnnotationImage]
	if image == "" {
		image = imageHost
	}
	return image, obj.GetName(), true, nil
}
