package kubetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/exec"
)

const testLabel = "bullpen.dev/kubetest"

// suffix is a random name suffix, so that runs on one cluster never collide.
func suffix(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// testPod is a pod of the local image that sleeps until deleted, and exits
// at once on SIGTERM (PID 1 ignores signals it has no handler for).
func testPod(env *Env, name, run string) *corev1.Pod {
	grace := int64(1)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: env.Namespace, Labels: map[string]string{testLabel: run}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name:            "main",
				Image:           env.Image,
				ImagePullPolicy: corev1.PullNever,
				Command:         []string{"sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"},
			}},
		},
	}
}

// createPod creates pod and deletes it when the test ends (a no-op if the
// test deleted it already).
func createPod(ctx context.Context, t *testing.T, env *Env, pod *corev1.Pod) {
	t.Helper()
	if _, err := env.Client.CoreV1().Pods(env.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = env.Client.CoreV1().Pods(env.Namespace).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
}

// TestPodExec creates a pod from the local image, waits for it to run, execs
// commands through the apiserver (websocket executor: output, stdin, exit
// code), deletes it and checks that nothing of it is left.
func TestPodExec(t *testing.T) {
	env := Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := suffix(t)
	name := "kubetest-exec-" + run

	start := time.Now()
	createPod(ctx, t, env, testPod(env, name, run))
	pod, err := env.WaitRunning(ctx, name, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	running := time.Since(start)
	if pod.Status.PodIP == "" || pod.Spec.NodeName == "" {
		t.Errorf("running pod has IP %q on node %q, want both set (scheduled, on the CNI bridge)", pod.Status.PodIP, pod.Spec.NodeName)
	}

	// pod IPs route from the host (the test cluster's node): a closed
	// port answers at once with a reset, where an unrouted IP would time out
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(pod.Status.PodIP, "1"), 3*time.Second)
	if err == nil {
		conn.Close()
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial the pod's IP %s port 1 from the host = %v, want connection refused (routed, closed)", pod.Status.PodIP, err)
	}

	out, errOut, err := env.Exec(ctx, name, "main", []string{"echo", "hello from " + name}, nil)
	if err != nil || out != "hello from "+name+"\n" || errOut != "" {
		t.Fatalf("exec echo = %q, %q, %v; want %q", out, errOut, err, "hello from "+name+"\n")
	}
	firstOutput := time.Since(start)
	t.Logf("pod create → Running %v, → first exec output %v", running.Round(time.Millisecond), firstOutput.Round(time.Millisecond))

	out, _, err = env.Exec(ctx, name, "main", []string{"sh", "-c", "tr a-z A-Z; echo oops >&2"}, strings.NewReader("through stdin\n"))
	if err != nil || out != "THROUGH STDIN\n" {
		t.Errorf("exec with stdin = %q, %v; want %q", out, err, "THROUGH STDIN\n")
	}
	_, _, err = env.Exec(ctx, name, "main", []string{"sh", "-c", "exit 3"}, nil)
	var exitErr exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitStatus() != 3 {
		t.Errorf("exec exit 3 = %v, want an exit error with status 3", err)
	}

	// a graceful delete: the pod object stays until the kubelet has stopped
	// its containers and torn its sandbox down (a zero grace period would
	// remove the object at once, whatever the node still runs)
	if err := env.Client.CoreV1().Pods(env.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete pod: %v", err)
	}
	deleted := time.Now()
	if err := env.WaitGone(ctx, name, time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("pod delete → gone %v", time.Since(deleted).Round(time.Millisecond))
	left, err := env.Client.CoreV1().Pods(env.Namespace).List(ctx, metav1.ListOptions{LabelSelector: testLabel + "=" + run})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 0 {
		t.Errorf("%d pods of the test left after deletion, want 0", len(left.Items))
	}
}

// TestTenPodsAtOnce creates ten pods at once and waits for all of them to
// run: the scheduler, the kubelet and the CNI under a burst of creates.
func TestTenPodsAtOnce(t *testing.T) {
	env := Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := suffix(t)
	start := time.Now()
	names := make([]string, 10)
	for i := range names {
		names[i] = fmt.Sprintf("kubetest-burst-%s-%d", run, i)
		createPod(ctx, t, env, testPod(env, names[i], run))
	}
	ips := map[string]string{}
	for _, n := range names {
		pod, err := env.WaitRunning(ctx, n, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if other, dup := ips[pod.Status.PodIP]; dup {
			t.Errorf("pods %s and %s share the IP %s", other, n, pod.Status.PodIP)
		}
		ips[pod.Status.PodIP] = n
	}
	t.Logf("10 pods created at once → all Running in %v", time.Since(start).Round(time.Millisecond))
}
