package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

const testNS = "sb"

// helperBin is bullpen-kube-init built for this test binary's run.
var helperBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kube-helper")
	if err != nil {
		panic(err)
	}
	helperBin = filepath.Join(dir, "bullpen-kube-init")
	out, err := exec.Command("go", "build", "-o", helperBin, "github.com/bullpen-hq/bullpen/cmd/bullpen-kube-init").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build the helper: %v: %s\n", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// localExecer runs the helper on this host, as the Pod would: the
// plumbing of exec, kill and files without a cluster.
type localExecer struct{}

func (localExecer) stream(ctx context.Context, _ string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	c := exec.CommandContext(ctx, helperBin, cmd[1:]...)
	c.Stdin, c.Stdout, c.Stderr = stdin, stdout, stderr
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return ee.ExitCode(), nil
	}
	return 0, err
}

// fakeCluster is a fake clientset whose Pods run as soon as they are
// made, and a driver on it with events recorded.
type fakeCluster struct {
	c      *fake.Clientset
	d      *Driver
	mu     sync.Mutex
	events []sandbox.Event
}

func newFake(t *testing.T) *fakeCluster {
	t.Helper()
	f := &fakeCluster{c: fake.NewClientset()}
	f.c.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.2.3", ContainerStatuses: []corev1.ContainerStatus{
			{Name: container, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
		return false, nil, nil
	})
	d, err := New(context.Background(), Config{Client: f.c, Namespace: testNS, Office: "o1", InitImage: "bullpen/init:1",
		HostImage: "debian:13", RuntimeClassName: "gvisor", StorageClassName: "fast",
		Sandbox: sandbox.Config{CheckInterval: 20 * time.Millisecond, OnEvent: func(ev sandbox.Event) {
			f.mu.Lock()
			f.events = append(f.events, ev)
			f.mu.Unlock()
		}}})
	if err != nil {
		t.Fatal(err)
	}
	d.exec = localExecer{}
	t.Cleanup(func() { d.Close() })
	f.d = d
	return f
}

func (f *fakeCluster) sawEvent(typ sandbox.EventType, id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ev := range f.events {
		if ev.Type == typ && ev.SandboxID == id {
			return true
		}
	}
	return false
}

// objects counts the objects of each kind labelled with the sandbox.
func (f *fakeCluster) objects(t *testing.T, id string) map[string]int {
	t.Helper()
	ctx := context.Background()
	sel := f.d.selector(id)
	out := map[string]int{}
	o := listOpts(sel)
	if l, err := f.c.CoreV1().Pods(testNS).List(ctx, o); err == nil {
		out["pod"] = len(l.Items)
	}
	if l, err := f.c.CoreV1().Secrets(testNS).List(ctx, o); err == nil {
		out["secret"] = len(l.Items)
	}
	if l, err := f.c.CoreV1().PersistentVolumeClaims(testNS).List(ctx, o); err == nil {
		out["claim"] = len(l.Items)
	}
	if l, err := f.c.NetworkingV1().NetworkPolicies(testNS).List(ctx, o); err == nil {
		out["networkpolicy"] = len(l.Items)
	}
	if l, err := f.c.CoreV1().Services(testNS).List(ctx, o); err == nil {
		out["service"] = len(l.Items)
	}
	return out
}
