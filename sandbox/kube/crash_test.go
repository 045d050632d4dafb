package kube_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/kubetest"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCrashChild is the replica TestClusterCrashMidCreate kills: it runs
// only with KUBE_CRASH_OFFICE set, and creates one sandbox.
func TestCrashChild(t *testing.T) {
	office := os.Getenv("KUBE_CRASH_OFFICE")
	if office == "" {
		t.Skip("the child of TestClusterCrashMidCreate")
	}
	env := kubetest.Cluster(t)
	d, err := kube.New(context.Background(), kube.Config{Client: env.Client, REST: env.Config, Namespace: env.Namespace, Office: office,
		InitImage: kubetest.InitImageName, HostImage: env.Image, PullPolicy: corev1.PullNever, Sandbox: smallSandboxes})
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Create(context.Background(), sandbox.Spec{Image: "host"})
	t.Fatalf("Create returned (%v) before the parent killed this process", err)
}

// TestClusterCrashMidCreate: a replica kill -9'd while it creates a
// sandbox leaves objects behind; the next replica's reconciliation
// deletes every one (once the create is surely dead), and a sandbox
// whose Pod is deleted behind the driver's back is marked lost.
func TestClusterCrashMidCreate(t *testing.T) {
	env := kubetest.Cluster(t)
	kubetest.InitImage(t)
	env.RecycleVolumes(t)
	defer env.RecycleVolumes(t)
	office := fmt.Sprintf("crash%d", rand.Uint32())
	sel := metav1.ListOptions{LabelSelector: kube.LabelOffice + "=" + office}
	ctx := context.Background()
	child := exec.Command(os.Args[0], "-test.run", "^TestCrashChild$", "-test.v")
	child.Env = append(os.Environ(), "KUBE_CRASH_OFFICE="+office)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		pods, err := env.Client.CoreV1().Pods(env.Namespace).List(ctx, sel)
		if err == nil && len(pods.Items) > 0 {
			break
		}
		if time.Now().After(deadline) {
			child.Process.Kill()
			t.Fatal("the child made no pod within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	child.Process.Kill() // SIGKILL mid-create: the Pod exists, Create has not returned
	child.Wait()
	if left := objectsLeft(ctx, t, env, sel); left == "" {
		t.Fatal("the killed child left nothing: the test did not kill it mid-create")
	}

	var events []sandbox.Event
	evc := make(chan sandbox.Event, 16)
	d, err := kube.New(ctx, kube.Config{Client: env.Client, REST: env.Config, Namespace: env.Namespace, Office: office,
		InitImage: kubetest.InitImageName, HostImage: env.Image, PullPolicy: corev1.PullNever, GracePeriod: time.Second,
		StartTimeout: 8 * time.Second, ReconcileInterval: 500 * time.Millisecond,
		Sandbox: sandbox.Config{DefaultCPU: smallSandboxes.DefaultCPU, DefaultMemoryBytes: smallSandboxes.DefaultMemoryBytes, OnEvent: func(ev sandbox.Event) { evc <- ev }}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	start := time.Now()
	deadline = time.Now().Add(45 * time.Second)
	for left := objectsLeft(ctx, t, env, sel); left != ""; left = objectsLeft(ctx, t, env, sel) {
		if time.Now().After(deadline) {
			t.Fatalf("45 s after the crash: %s", left)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("the crashed create's objects were gone %s after the next replica started", time.Since(start).Round(time.Millisecond))

	in, err := d.Create(ctx, sandbox.Spec{Image: "host"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Terminate(ctx, in.ID)
	if err := env.Client.CoreV1().Pods(env.Namespace).Delete(ctx, "bullpen-"+in.ID[3:], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-evc:
			events = append(events, ev)
			if ev.Type == sandbox.EventCrashed && ev.SandboxID == in.ID {
				if g, err := d.Get(ctx, in.ID); err != nil || g.State != sandbox.StateStopped {
					t.Errorf("a lost sandbox: %+v, %v; want stopped", g, err)
				}
				return
			}
		case <-timeout:
			t.Fatalf("no crashed event for a sandbox whose pod was deleted; events %+v", events)
		}
	}
}
