package kubernetes_test

import (
	"context"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/kubetest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

// TestServerSideDryRun has the test cluster's apiserver validate and admit
// every object of the manifests without storing it (dryRun=All): schemas,
// strict field validation, admission, RBAC's escalation check.
// Namespaced objects need their namespace to exist, so the namespaces the
// manifests declare are created for real first (after their own dry run) and
// deleted at the end; bullpen-sandboxes exists already on the test cluster.
func TestServerSideDryRun(t *testing.T) {
	env := kubetest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(env.Client.Discovery()))
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}
	objs := manifests(t)

	for _, o := range objs {
		if o.GetKind() != "Namespace" {
			continue
		}
		nss := env.Client.CoreV1().Namespaces()
		if ns, err := nss.Get(ctx, o.GetName(), metav1.GetOptions{}); err == nil {
			if ns.DeletionTimestamp != nil {
				t.Fatalf("namespace %s is being deleted (an earlier run's?): try again when it is gone", o.GetName())
			}
			t.Logf("namespace %s exists on the test cluster: not dry-run", o.GetName())
			continue
		}
		if _, err := env.Dynamic.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Create(ctx, o, dryRun); err != nil {
			t.Fatalf("dry-run create namespace %s: %v", o.GetName(), err)
		}
		if _, err := env.Dynamic.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create namespace %s: %v", o.GetName(), err)
		}
		name := o.GetName()
		t.Cleanup(func() { deleteNamespace(t, env, name) })
	}

	n := 0
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			continue
		}
		m, err := mapper.RESTMapping(o.GroupVersionKind().GroupKind(), o.GroupVersionKind().Version)
		if err != nil {
			t.Errorf("%s %s: the apiserver does not serve it: %v", o.GetKind(), o.GetName(), err)
			continue
		}
		got, err := env.Dynamic.Resource(m.Resource).Namespace(o.GetNamespace()).Create(ctx, o, dryRun)
		if err != nil {
			t.Errorf("dry-run create %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
			continue
		}
		if got.GetUID() == "" {
			t.Errorf("dry-run create %s %s returned no admitted object", o.GetKind(), o.GetName())
		}
		n++
	}
	t.Logf("%d objects admitted by a server-side dry run", n)
	// nothing was stored
	if _, err := env.Client.AppsV1().Deployments("bullpen").Get(ctx, "bullpen", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after a dry run, get Deployment bullpen = %v, want NotFound", err)
	}
}

// deleteNamespace deletes a namespace the test created and waits until it
// is gone, so that the next run on the same cluster can create it again.
func deleteNamespace(t *testing.T, env *kubetest.Env, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nss := env.Client.CoreV1().Namespaces()
	if err := nss.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete namespace %s: %v", name, err)
		return
	}
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := nss.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		t.Errorf("namespace %s not gone: %v", name, err)
	}
}
