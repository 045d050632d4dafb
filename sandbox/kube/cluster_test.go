package kube_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/kubetest"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// smallSandboxes are the cluster tests' default limits: the one node has
// 2 CPUs, and packages run their cluster tests at the same time, so a
// default of 1 CPU each would leave Pods unschedulable.
var smallSandboxes = sandbox.Config{DefaultCPU: 0.25, DefaultMemoryBytes: 256 << 20}

// clusterDriver opens a driver on the test cluster, in an office of the
// test's own so that its reconciliation touches no other test's objects;
// cleanup terminates what the test left.
func clusterDriver(t *testing.T) (*kube.Driver, *kubetest.Env) {
	t.Helper()
	env := kubetest.Cluster(t)
	img := kubetest.InitImage(t)
	env.RecycleVolumes(t)
	ctx := context.Background()
	d, err := kube.New(ctx, kube.Config{Client: env.Client, REST: env.Config, Namespace: env.Namespace,
		Office: fmt.Sprintf("t%d", rand.Uint32()), InitImage: img, HostImage: env.Image, PullPolicy: corev1.PullNever,
		GracePeriod: time.Second, StartTimeout: time.Minute, Sandbox: smallSandboxes})
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
		env.RecycleVolumes(t)
	})
	return d, env
}

// TestClusterSandbox: on a real cluster, a sandbox with limits and no
// network runs commands with streamed output and stdin, keeps its files
// across stop and start, and leaves no object behind when terminated.
func TestClusterSandbox(t *testing.T) {
	d, env := clusterDriver(t)
	ctx := context.Background()
	start := time.Now()
	in, err := d.Create(ctx, sandbox.Spec{Image: "host", CPU: 0.5, MemoryBytes: 128 << 20, Env: map[string]string{"GREETING": "hi"},
		Secrets: []sandbox.Secret{{Name: "TOKEN", Value: "s3cret"}, {Name: "KEY", Value: "k3y", File: "/home/sandbox/.key"}}})
	if err != nil {
		t.Fatal(err)
	}
	created := time.Since(start)
	if r, err := d.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"echo", "first"}}); err != nil || string(r.Stdout) != "first\n" {
		t.Fatalf("first Run = %q, %v", r.Stdout, err)
	}
	t.Logf("create → running: %s; → first output: %s", created.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	pod, err := env.Client.CoreV1().Pods(env.Namespace).Get(ctx, "bullpen-"+strings.TrimPrefix(in.ID, "sb_"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lim := pod.Spec.Containers[0].Resources.Limits; lim.Cpu().MilliValue() != 500 || lim.Memory().Value() != 128<<20 {
		t.Errorf("pod limits = %v, want 500m cpu and 128Mi", lim)
	}

	// Streaming: the first line arrives while the command still runs.
	p, err := d.Exec(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo one; sleep 2; echo two"}})
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, p.Stderr())
	t0 := time.Now()
	br := bufio.NewReader(p.Stdout())
	line, err := br.ReadString('\n')
	if err != nil || line != "one\n" || time.Since(t0) > 1500*time.Millisecond {
		t.Errorf("first line %q, %v after %s; want one, before the command ends", line, err, time.Since(t0))
	}
	rest, _ := io.ReadAll(br)
	if res, err := p.Wait(); err != nil || res.Code != 0 || string(rest) != "two\n" {
		t.Errorf("Wait = %+v, %v, rest %q", res, err, rest)
	}

	r, err := d.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", `cat; echo " $GREETING $TOKEN $(cat .key) $(id -u) $(pwd)"; exit 4`},
		Stdin: strings.NewReader("from stdin")})
	if want := "from stdin hi s3cret k3y 1000 /home/sandbox\n"; err != nil || string(r.Stdout) != want || r.ExitCode != 4 {
		t.Errorf("Run = %q (stderr %q), exit %d, %v; want %q, exit 4", r.Stdout, r.Stderr, r.ExitCode, err, want)
	}
	u, err := d.Stats(ctx, in.ID)
	if err != nil || u.MemoryBytes <= 0 || u.MemoryBytes > 128<<20 || u.Pids < 1 || u.CPUSeconds <= 0 {
		t.Errorf("Stats = %+v, %v; want the container's usage", u, err)
	}
	r, err = d.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"sleep", "30"}, Timeout: time.Second})
	if err != nil || !r.TimedOut || r.Duration > 10*time.Second {
		t.Errorf("a command past its timeout: %+v, %v; want timed out within seconds", r, err)
	}

	if err := d.WriteFile(ctx, in.ID, "/home/sandbox/kept.txt", strings.NewReader("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.Stop(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := d.Start(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	t.Logf("start of a stopped sandbox: %s", time.Since(start).Round(time.Millisecond))
	rc, err := d.ReadFile(ctx, in.ID, "/home/sandbox/kept.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "kept" {
		t.Errorf("after stop and start the file holds %q, want kept", b)
	}

	overPodNetwork(t, d)
	if err := d.Terminate(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	sel := metav1.ListOptions{LabelSelector: kube.LabelSandbox + "=" + in.ID}
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := objectsLeft(ctx, t, env, sel)
		if left == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after Terminate: %s", left)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func objectsLeft(ctx context.Context, t *testing.T, env *kubetest.Env, sel metav1.ListOptions) string {
	t.Helper()
	c := env.Client
	var left []string
	pods, err1 := c.CoreV1().Pods(env.Namespace).List(ctx, sel)
	secs, err2 := c.CoreV1().Secrets(env.Namespace).List(ctx, sel)
	pvcs, err3 := c.CoreV1().PersistentVolumeClaims(env.Namespace).List(ctx, sel)
	nps, err4 := c.NetworkingV1().NetworkPolicies(env.Namespace).List(ctx, sel)
	svcs, err5 := c.CoreV1().Services(env.Namespace).List(ctx, sel)
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for kind, n := range map[string]int{"pods": len(pods.Items), "secrets": len(secs.Items), "claims": len(pvcs.Items),
		"network policies": len(nps.Items), "services": len(svcs.Items)} {
		if n > 0 {
			left = append(left, fmt.Sprintf("%d %s", n, kind))
		}
	}
	return strings.Join(left, ", ")
}

// TestClusterBigFile: 100 MB go in and come out identical (SHA-256),
// streamed both ways.
func TestClusterBigFile(t *testing.T) {
	d, _ := clusterDriver(t)
	ctx := context.Background()
	in, err := d.Create(ctx, sandbox.Spec{Image: "host", DiskBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	const size = 100 << 20
	src := io.LimitReader(rand.NewChaCha8([32]byte{7}), size)
	hin := sha256.New()
	start := time.Now()
	if err := d.WriteFile(ctx, in.ID, "/home/sandbox/big.bin", io.TeeReader(src, hin), 0o600); err != nil {
		t.Fatal(err)
	}
	up := time.Since(start)
	start = time.Now()
	rc, err := d.ReadFile(ctx, in.ID, "/home/sandbox/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	hout := sha256.New()
	n, err := io.Copy(hout, rc)
	rc.Close()
	down := time.Since(start)
	if err != nil || n != size {
		t.Fatalf("read back %d bytes, %v; want %d", n, err, size)
	}
	if a, b := hex.EncodeToString(hin.Sum(nil)), hex.EncodeToString(hout.Sum(nil)); a != b {
		t.Errorf("SHA-256 in %s, out %s", a, b)
	}
	t.Logf("100 MB: write %s (%.0f MB/s), read %s (%.0f MB/s)", up.Round(time.Millisecond), 100/up.Seconds(),
		down.Round(time.Millisecond), 100/down.Seconds())
	r, err := d.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"sha256sum", "/home/sandbox/big.bin"}})
	if err != nil || !strings.HasPrefix(string(r.Stdout), hex.EncodeToString(hin.Sum(nil))) {
		t.Errorf("sha256sum in the sandbox = %q, %v", r.Stdout, err)
	}
	overPodNetwork(t, d)
}

// TestClusterNetworkNone: a process in a sandbox with network none
// cannot reach a port listening on the host, although the test cluster's
// CNI enforces no NetworkPolicy; the same attempt from a sandbox allowed
// to reach the host succeeds, so the attack is real.
func TestClusterNetworkNone(t *testing.T) {
	d, _ := clusterDriver(t)
	ctx := context.Background()
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, _ := bufio.NewReader(c).ReadString('\n')
			got <- b
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	none, err := d.Create(ctx, sandbox.Spec{Image: "host"})
	if err != nil {
		t.Fatal(err)
	}
	gw := gateway(t, d, none.ID)
	attack := []string{"timeout", "5", "bash", "-c", fmt.Sprintf("echo attack > /dev/tcp/%s/%d && echo CONNECTED", gw, port)}
	r, err := d.Run(ctx, none.ID, sandbox.ExecRequest{Cmd: attack})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode == 0 || strings.Contains(string(r.Stdout), "CONNECTED") {
		t.Errorf("network none reached the host %s:%d: exit %d, %q %q", gw, port, r.ExitCode, r.Stdout, r.Stderr)
	}
	select {
	case b := <-got:
		t.Errorf("the host's listener got %q from a sandbox with network none", b)
	default:
	}
	open, err := d.Create(ctx, sandbox.Spec{Image: "host", Network: sandbox.NetworkPolicy{Allow: []string{gw + "/32"}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err = d.Run(ctx, open.ID, sandbox.ExecRequest{Cmd: attack})
	if err != nil || !strings.Contains(string(r.Stdout), "CONNECTED") {
		t.Fatalf("the control sandbox allowed %s/32 did not connect: exit %d, %q %q, %v", gw, r.ExitCode, r.Stdout, r.Stderr, err)
	}
	select {
	case b := <-got:
		if b != "attack\n" {
			t.Errorf("listener got %q", b)
		}
	case <-time.After(5 * time.Second):
		t.Error("the control sandbox's connection never arrived")
	}
}

// gateway reads the sandbox's default gateway (the host side of its
// bridge) from /proc/net/route inside it.
func gateway(t *testing.T, d *kube.Driver, id string) string {
	t.Helper()
	r, err := d.Run(context.Background(), id, sandbox.ExecRequest{Cmd: []string{"cat", "/proc/net/route"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(r.Stdout), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[1] == "00000000" {
			v, err := strconv.ParseUint(f[2], 16, 32)
			if err != nil {
				break
			}
			return net.IPv4(byte(v), byte(v>>8), byte(v>>16), byte(v>>24)).String()
		}
	}
	t.Fatalf("no default route in %q", r.Stdout)
	return ""
}

// TestClusterMissingImage: a create whose image the node cannot get fails
// fast with not found, and leaves nothing behind.
func TestClusterMissingImage(t *testing.T) {
	d, env := clusterDriver(t)
	ctx := context.Background()
	start := time.Now()
	_, err := d.Create(ctx, sandbox.Spec{Image: "bullpen.local/no-such-image:1"})
	if bullpen.ErrorCode(err) != bullpen.ENOTFOUND || time.Since(start) > 30*time.Second {
		t.Fatalf("Create of a missing image = %v after %s, want not found, fast", err, time.Since(start))
	}
	t.Logf("refused after %s: %v", time.Since(start).Round(time.Millisecond), err)
	list, err := d.List(ctx, nil)
	if err != nil || len(list) != 0 {
		t.Errorf("List after a failed create = %+v, %v", list, err)
	}
	pods, err := env.Client.CoreV1().Pods(env.Namespace).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelManagedBy + "=" + kube.ManagedBy})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.Containers[0].Image == "bullpen.local/no-such-image:1" && p.DeletionTimestamp == nil {
			t.Errorf("pod %s of the failed create is left", p.Name)
		}
	}
}

// TestClusterTwoReplicas: two drivers of one office (two Bullpen
// replicas) see one sandbox: what one writes the other reads, a stop by
// one is seen by the other within moments (the records' watch), and no
// replica takes the other's stop for a loss.
func TestClusterTwoReplicas(t *testing.T) {
	a, env := clusterDriver(t)
	ctx := context.Background()
	var lost atomic.Int32
	b, err := kube.New(ctx, kube.Config{Client: env.Client, REST: env.Config, Namespace: env.Namespace, Office: a.Office(),
		InitImage: kubetest.InitImageName, HostImage: env.Image, PullPolicy: corev1.PullNever, GracePeriod: time.Second,
		Sandbox: sandbox.Config{DefaultCPU: smallSandboxes.DefaultCPU, DefaultMemoryBytes: smallSandboxes.DefaultMemoryBytes, OnEvent: func(ev sandbox.Event) {
			if ev.Type == sandbox.EventCrashed {
				lost.Add(1)
			}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	in, err := a.Create(ctx, sandbox.Spec{Image: "host"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.WriteFile(ctx, in.ID, "/home/sandbox/turn1.txt", strings.NewReader("from replica a"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := b.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"cat", "turn1.txt"}})
	if err != nil || string(r.Stdout) != "from replica a" {
		t.Fatalf("replica b reads %q, %v", r.Stdout, err)
	}
	if err := b.Stop(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		g, err := a.Get(ctx, in.ID)
		if err == nil && g.State == sandbox.StateStopped {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica a still sees %+v, %v after b stopped it", g.State, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := a.Start(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(5 * time.Second)
	for {
		r, err = b.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"cat", "turn1.txt"}})
		if err == nil && string(r.Stdout) == "from replica a" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a's start, b reads %q, %v", r.Stdout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // let b's pod watch see the stop's deletion
	if n := lost.Load(); n > 0 {
		t.Errorf("replica b took a stop for a loss (%d crashed events)", n)
	}
}
