package kube_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/kubetest"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// poolDriver opens a driver with a warm pool of size on the test
// cluster, in an office of its own. Cleanup terminates the sandboxes,
// and a replica of the office opened without a pool retires the
// members (as a restart with the pool turned off would).
func poolDriver(t testing.TB, env *kubetest.Env, office string, size int, opts ...func(*kube.Config)) *kube.Driver {
	t.Helper()
	cfg := kube.Config{Client: env.Client, REST: env.Config, Namespace: env.Namespace, Office: office,
		InitImage: kubetest.InitImage(t), HostImage: env.Image, PullPolicy: corev1.PullNever,
		GracePeriod: time.Second, StartTimeout: time.Minute, WarmPool: size,
		// Members request their cpu while they wait: on the test
		// cluster's 2-core node, 1 cpu each would leave no room for a
		// stopped sandbox's new Pod beside the refilled pool.
		Sandbox: sandbox.Config{DefaultCPU: 0.25, DefaultMemoryBytes: 128 << 20}}
	for _, o := range opts {
		o(&cfg)
	}
	d, err := kube.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := d.TerminateAll(ctx); err != nil {
			t.Errorf("TerminateAll: %v", err)
		}
		d.Close()
		cfg.WarmPool = 0
		if off, err := kube.New(ctx, cfg); err != nil {
			t.Errorf("retire the pool: %v", err)
		} else {
			off.Close()
		}
		env.RecycleVolumes(t)
	})
	return d
}

// runningMembers waits (up to 2 minutes) for the office's pool to hold n
// running members and returns their sandbox ids.
func runningMembers(t testing.TB, env *kubetest.Env, office string, n int) map[string]bool {
	t.Helper()
	sel := metav1.ListOptions{LabelSelector: kube.LabelOffice + "=" + office + "," + kube.LabelPool}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		pods, err := env.Client.CoreV1().Pods(env.Namespace).List(context.Background(), sel)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, p := range pods.Items {
			for _, st := range p.Status.ContainerStatuses {
				if st.Name == "sandbox" && st.State.Running != nil && p.DeletionTimestamp == nil {
					ids[p.Labels[kube.LabelSandbox]] = true
				}
			}
		}
		if len(ids) == n {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("the warm pool holds %d running members after 2 minutes, want %d", len(ids), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestClusterWarmPool: on a real cluster with a pool of 2, a create
// claims a running member; commands and files work in it, its files
// survive a stop and a start, its terminate leaves no object, and the
// pool refills to 2 with new members.
func TestClusterWarmPool(t *testing.T) {
	env := kubetest.Cluster(t)
	env.RecycleVolumes(t)
	office := fmt.Sprintf("pool%d", rand.Uint32())
	d := poolDriver(t, env, office, 2)
	ctx := context.Background()
	members := runningMembers(t, env, office, 2)

	start := time.Now()
	in, err := d.Create(ctx, sandbox.Spec{Image: "host", Name: "warm"})
	if err != nil {
		t.Fatal(err)
	}
	created := time.Since(start)
	r, err := d.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo first $(id -u) $(pwd)"}})
	if want := "first 1000 /home/sandbox\n"; err != nil || string(r.Stdout) != want {
		t.Fatalf("first Run = %q (stderr %q), %v; want %q", r.Stdout, r.Stderr, err, want)
	}
	t.Logf("warm create: %s; → first output: %s", created.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if !members[in.ID] {
		t.Fatalf("Create made %s, want one of the pool's members %v", in.ID, members)
	}

	if err := d.WriteFile(ctx, in.ID, "/home/sandbox/kept.txt", strings.NewReader("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.Stop(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := d.Start(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	rc, err := d.ReadFile(ctx, in.ID, "/home/sandbox/kept.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "kept" {
		t.Errorf("after stop and start the file holds %q, want kept", b)
	}

	refilled := runningMembers(t, env, office, 2)
	if refilled[in.ID] {
		t.Errorf("the claimed sandbox still counts as a member: %v", refilled)
	}
	if err := d.Terminate(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	sel := metav1.ListOptions{LabelSelector: kube.LabelSandbox + "=" + in.ID}
	deadline := time.Now().Add(30 * time.Second)
	for left := objectsLeft(ctx, t, env, sel); left != ""; left = objectsLeft(ctx, t, env, sel) {
		if time.Now().After(deadline) {
			t.Fatalf("after Terminate: %s", left)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if l, err := d.List(ctx, nil); err != nil || len(l) != 0 {
		t.Errorf("List = %v, %v; want no sandbox (members are not sandboxes)", l, err)
	}
}
