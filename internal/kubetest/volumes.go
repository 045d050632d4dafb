package kubetest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
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
		pv.Spec.ClaimRef = nil
		if _, err := e.Client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			tb.Fatalf("kubetest: release volume %s: %v", pv.Name, err)
		}
	}
}
