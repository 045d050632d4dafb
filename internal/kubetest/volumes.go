package kubetest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RecycleVolumes makes the test cluster's local PersistentVolumes that a
// deleted claim released (reclaim policy Retain, no provisioner to delete
// them) available again: their directory, on this host, is emptied and
// their claim reference dropped. Without it every workspace claim a test
// makes uses up one of the few pre-created volumes for good.
func (e *Env) RecycleVolumes(tb testing.TB) {
	tb.Helper()
	ctx := context.Background()
	pvs, err := e.Client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: "bullpen.dev/test-cluster=true"})
	if err != nil {
		tb.Fatalf("kubetest: list volumes: %v", err)
	}
	for i := range pvs.Items {
		pv := &pvs.Items[i]
		if pv.Status.Phase != corev1.VolumeReleased || pv.Spec.Local == nil {
			continue
		}
		ents, err := os.ReadDir(pv.Spec.Local.Path)
		if err != nil {
			tb.Fatalf("kubetest: volume %s: %v", pv.Name, err)
		}
		for _, en := range ents {
			if err := os.RemoveAll(filepath.Join(pv.Spec.Local.Path, en.Name())); err != nil {
				tb.Fatalf("kubetest: empty volume %s: %v", pv.Name, err)
			}
		}
		for try := 0; ; try++ {
			pv.Spec.ClaimRef = nil
			_, err := e.Client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
			if err == nil || !apierrors.IsConflict(err) || try == 5 {
				if err != nil && !apierrors.IsConflict(err) {
					tb.Fatalf("kubetest: release volume %s: %v", pv.Name, err)
				}
				break // a volume still in conflict is left for the next call
			}
			if pv, err = e.Client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{}); err != nil ||
				pv.Status.Phase != corev1.VolumeReleased {
				break
			}
		}
	}
}
