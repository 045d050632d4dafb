package kubetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HostDirClaim makes a read-only PersistentVolumeClaim in the sandbox
// namespace whose volume is dir on this host (the cluster's one node): a
// hostPath PersistentVolume bound to it ahead, so that no provisioner is
// needed. It stands for the shared volume (NFS and the like) an operator
// puts the agent CLIs on. The volume carries no test-cluster label, so
// RecycleVolumes never empties it. Both are deleted when tb ends; dir is
// left as it was.
func (e *Env) HostDirClaim(tb testing.TB, dir string) string {
	tb.Helper()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		tb.Fatalf("kubetest: %v", err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "host-dir-" + hex.EncodeToString(b[:])
	ctx := context.Background()
	size := resource.MustParse("1Gi")
	dirType := corev1.HostPathDirectory
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "",
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: real, Type: &dirType}},
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: e.Namespace, Name: name},
		},
	}
	if _, err := e.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		tb.Fatalf("kubetest: create volume %s: %v", name, err)
	}
	empty := ""
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.Namespace},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany},
			StorageClassName: &empty,
			VolumeName:       name,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if _, err := e.Client.CoreV1().PersistentVolumeClaims(e.Namespace).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		tb.Fatalf("kubetest: create claim %s: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx := context.Background()
		_ = e.Client.CoreV1().PersistentVolumeClaims(e.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
		_ = e.Client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := e.Client.CoreV1().PersistentVolumeClaims(e.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil && got.Status.Phase == corev1.ClaimBound {
			return name
		}
		if time.Now().After(deadline) {
			tb.Fatalf("kubetest: claim %s of %s is not bound after 30 s (%v)", name, real, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
