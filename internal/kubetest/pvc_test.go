package kubetest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPVCOutlivesPods binds a PVC of the default StorageClass (one of the
// cluster's pre-created local PersistentVolumes), writes a file into it from
// one pod and reads it from a second pod after the first is deleted: the
// shape of a sandbox workspace kept across stop and start.
func TestPVCOutlivesPods(t *testing.T) {
	env := Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := suffix(t)
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "kubetest-ws-" + run, Namespace: env.Namespace, Labels: map[string]string{testLabel: run}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			},
		},
	}
	pvcs := env.Client.CoreV1().PersistentVolumeClaims(env.Namespace)
	if _, err := pvcs.Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create PVC: %v", err)
	}
	t.Cleanup(func() { _ = pvcs.Delete(context.Background(), claim.Name, metav1.DeleteOptions{}) })

	withClaim := func(name string) *corev1.Pod {
		p := testPod(env, name, run)
		p.Spec.Volumes = []corev1.Volume{{Name: "ws", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name}}}}
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "ws", MountPath: "/workspace"}}
		return p
	}
	first := withClaim("kubetest-ws-a-" + run)
	createPod(ctx, t, env, first)
	if _, err := env.WaitRunning(ctx, first.Name, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := env.Exec(ctx, first.Name, "main", []string{"sh", "-c", "echo kept > /workspace/note"}, nil); err != nil {
		t.Fatalf("write into the PVC: %v %s", err, errOut)
	}
	if err := env.Client.CoreV1().Pods(env.Namespace).Delete(ctx, first.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := env.WaitGone(ctx, first.Name, time.Minute); err != nil {
		t.Fatal(err)
	}

	second := withClaim("kubetest-ws-b-" + run)
	createPod(ctx, t, env, second)
	if _, err := env.WaitRunning(ctx, second.Name, time.Minute); err != nil {
		t.Fatal(err)
	}
	out, _, err := env.Exec(ctx, second.Name, "main", []string{"cat", "/workspace/note"}, nil)
	if err != nil || out != "kept\n" {
		t.Errorf("cat /workspace/note in a second pod = %q, %v; want %q", out, err, "kept\n")
	}
	got, err := pvcs.Get(ctx, claim.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != corev1.ClaimBound || got.Spec.VolumeName == "" {
		t.Errorf("PVC is %s on volume %q, want Bound to a local PersistentVolume", got.Status.Phase, got.Spec.VolumeName)
	}
}
