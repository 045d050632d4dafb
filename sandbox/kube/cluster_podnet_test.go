package kube_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/kubetest"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/kube"
	"github.com/bullpen-hq/bullpen/sandbox/kube/podinit"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// overPodNetwork fails t unless every command and file stream of d went
// to the Pods' init over the pod network (none fell back to pods/exec).
func overPodNetwork(t *testing.T, d *kube.Driver) {
	t.Helper()
	if pod, api := d.StreamCounts(); pod == 0 || api != 0 {
		t.Errorf("streams: %d over the pod network, %d through the apiserver; want all over the pod network", pod, api)
	}
}

// podOf reads a sandbox's Pod and the token its init was given.
func podOf(t *testing.T, env *kubetest.Env, id string) (*corev1.Pod, string) {
	t.Helper()
	ctx := context.Background()
	name := "bullpen-" + strings.TrimPrefix(id, "sb_")
	pod, err := env.Client.CoreV1().Pods(env.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec, err := env.Client.CoreV1().Secrets(env.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod, string(sec.Data["token"])
}

// TestClusterTransports: the first output of a command over the pod
// network and through the apiserver's exec, on one sandbox (figures in
// the log: the fastest of five each).
func TestClusterTransports(t *testing.T) {
	d, env := clusterDriver(t)
	ctx := context.Background()
	api, err := kube.New(ctx, kube.Config{Client: env.Client, REST: env.Config, Namespace: env.Namespace, Office: d.Office(),
		InitImage: kubetest.InitImageName, HostImage: env.Image, PullPolicy: corev1.PullNever, Transport: kube.TransportAPIServer,
		Sandbox: smallSandboxes})
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	in, err := d.Create(ctx, sandbox.Spec{Image: "host"})
	if err != nil {
		t.Fatal(err)
	}
	first := func(drv *kube.Driver) time.Duration {
		best := time.Hour
		for range 5 {
			start := time.Now()
			p, err := drv.Exec(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"echo", "hi"}})
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 3)
			if _, err := p.Stdout().Read(b); err != nil || string(b) != "hi\n" {
				t.Fatalf("first output %q, %v", b, err)
			}
			best = min(best, time.Since(start))
			if _, err := p.Wait(); err != nil {
				t.Fatal(err)
			}
		}
		return best
	}
	podT, apiT := first(d), first(api)
	t.Logf("first exec output: pod network %s, apiserver pods/exec %s", podT.Round(10*time.Microsecond), apiT.Round(10*time.Microsecond))
	overPodNetwork(t, d)
	if pod, n := api.StreamCounts(); pod != 0 || n == 0 {
		t.Errorf("the apiserver driver's streams: %d pod, %d apiserver", pod, n)
	}
}

// TestClusterInitPortAttack: another sandbox that may reach the first's
// Pod IP connects to its init's port with no token, a wrong one, or no
// request at all: nothing runs. The same connection with the right token
// does run its command (the attack is real).
func TestClusterInitPortAttack(t *testing.T) {
	d, env := clusterDriver(t)
	ctx := context.Background()
	victim, err := d.Create(ctx, sandbox.Spec{Image: "host"})
	if err != nil {
		t.Fatal(err)
	}
	pod, token := podOf(t, env, victim.ID)
	ip := pod.Status.PodIP
	if ip == "" || len(token) != 64 {
		t.Fatalf("victim pod IP %q, token of %d bytes", ip, len(token))
	}
	for _, e := range pod.Spec.Containers[0].Env {
		if e.Value == token || strings.Contains(strings.Join(pod.Spec.Containers[0].Command, " "), token) {
			t.Error("the token is in the Pod spec")
		}
	}
	attacker, err := d.Create(ctx, sandbox.Spec{Image: "host", Network: sandbox.NetworkPolicy{Allow: []string{ip + "/32"}}})
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{"exec", "t", "/home/sandbox", "0", "--", "touch", "/home/sandbox/pwned"}
	send := func(payload []byte) []byte {
		t.Helper()
		if err := d.WriteFile(ctx, attacker.ID, "/home/sandbox/req", bytes.NewReader(payload), 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := d.Run(ctx, attacker.ID, sandbox.ExecRequest{Cmd: []string{"timeout", "10", "bash", "-c",
			`exec 3<>/dev/tcp/$0/$1 && cat req >&3 && cat <&3`, ip, "7999"}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Stdout
	}
	for name, payload := range map[string][]byte{
		"no token":    podinit.EncodeRequest("", argv),
		"wrong token": podinit.EncodeRequest(strings.Repeat("0", 64), argv),
		"token-less":  []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
	} {
		if out := send(payload); len(out) == 0 || out[0] != 'r' {
			t.Errorf("%s: the init answered %q, want a refusal", name, out)
		}
	}
	if _, err := d.Stat(ctx, victim.ID, "/home/sandbox/pwned"); bullpen.ErrorCode(err) != bullpen.ENOTFOUND {
		t.Fatalf("after the refused attempts, stat pwned = %v, want not found", err)
	}
	if out := send(podinit.EncodeRequest(token, argv)); len(out) == 0 || out[0] != 'a' {
		t.Errorf("control: the init answered %q to the right token, want accepted", out)
	}
	if _, err := d.Stat(ctx, victim.ID, "/home/sandbox/pwned"); err != nil {
		t.Errorf("control: with the token the command did not run: %v", err)
	}
	overPodNetwork(t, d)
}
