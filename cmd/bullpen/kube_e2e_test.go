package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/kubetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubernetesRuntime: bullpen serve --sandbox-runtime=kubernetes runs
// the sandbox API on the test cluster, without root's local runtime:
// create, run, files, a 501 naming the driver for what it cannot do, and
// terminate leaving no Pod.
func TestKubernetesRuntime(t *testing.T) {
	env := kubetest.Cluster(t)
	img := kubetest.InitImage(t)
	env.RecycleVolumes(t)
	office := fmt.Sprintf("kube-e2e-%d", rand.Uint32())
	var out strings.Builder
	m := NewMain(&out, io.Discard)
	err := m.ParseFlags("serve", []string{"--data", t.TempDir(), "--addr", "127.0.0.1:0", "--name", office,
		"--sandbox-runtime=kubernetes", "--kube-config", os.Getenv("BULLPEN_TEST_KUBECONFIG"), "--kube-namespace", env.Namespace,
		"--kube-init-image", img, "--kube-host-image", env.Image, "--kube-image-pull-policy=Never"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if m.Sandboxes != nil {
			m.Sandboxes.Manager().TerminateAll(ctx)
		}
		m.Close(ctx)
		env.RecycleVolumes(t)
	})
	if m.Sandboxes == nil {
		t.Fatalf("sandboxes are down: %s", m.sandboxesDown)
	}
	token := tokenRE.FindString(out.String())
	var sb struct{ ID, State string }
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if st := apiCall(t, m, token, "POST", "/api/v1/sandboxes", map[string]any{"image": "host", "cpu": 0.5, "memory": "128Mi"}, &sb); st != 201 || sb.State != "running" {
		apiCall(t, m, token, "POST", "/api/v1/sandboxes", map[string]any{"image": "host", "cpu": 0.5, "memory": "128Mi"}, &e)
		t.Fatalf("create: %d %+v (%+v)", st, sb, e)
	}
	var run struct {
		Stdout   string `json:"stdout"`
		ExitCode int    `json:"exit_code"`
	}
	if st := apiCall(t, m, token, "POST", "/api/v1/sandboxes/"+sb.ID+"/run", map[string]any{"cmd": []string{"sh", "-c", "echo hello from $(cat /proc/sys/kernel/hostname); exit 3"}}, &run); st != 200 ||
		!strings.HasPrefix(run.Stdout, "hello from bullpen-") || run.ExitCode != 3 {
		t.Errorf("run: %d %+v", st, run)
	}
	if st := apiCall(t, m, token, "POST", "/api/v1/sandboxes/"+sb.ID+"/pause", nil, &e); st != 501 || !strings.Contains(e.Error.Message, "kubernetes driver") {
		t.Errorf("pause: %d %+v, want 501 naming the driver", st, e)
	}
	if st := apiCall(t, m, token, "DELETE", "/api/v1/sandboxes/"+sb.ID, nil, nil); st != 204 {
		t.Errorf("terminate: %d", st)
	}
	pods, err := env.Client.CoreV1().Pods(env.Namespace).List(context.Background(), metav1.ListOptions{LabelSelector: "bullpen.dev/sandbox=" + sb.ID})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("after terminate: %d pods, %v", len(pods.Items), err)
	}
}
