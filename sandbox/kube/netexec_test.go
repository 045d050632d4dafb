package kube

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/kube/podinit"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// countingExecer is the apiserver's exec stand-in: the helper run here,
// counted.
type countingExecer struct{ n atomic.Int64 }

func (c *countingExecer) stream(ctx context.Context, pod string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	c.n.Add(1)
	return localExecer{}.stream(ctx, pod, cmd, stdin, stdout, stderr)
}

// podNet makes a sandbox on the fake cluster whose Pod IP is loopback,
// with the helper's serve listening there (when serve is set) with the
// token the Pod's token variable refers to, and a netExecer on it.
func podNet(t *testing.T, serve bool, fallback execer) (*fakeCluster, string, *netExecer) {
	t.Helper()
	f := newFake(t)
	ctx := context.Background()
	in, err := f.d.Create(ctx, sandbox.Spec{Image: "host", Workdir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	pods := f.c.CoreV1().Pods(testNS)
	pod, err := pods.Get(ctx, objName(in.ID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.PodIP = "127.0.0.1"
	if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n := newNetExecer(f.d, fallback)
	n.settle = 300 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a free port, nothing listening once closed
	if err != nil {
		t.Fatal(err)
	}
	n.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if serve {
		sec, err := f.c.CoreV1().Secrets(testNS).Get(ctx, objName(in.ID), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		startServe(t, string(sec.Data[tokenKey]), n.port)
	}
	f.d.exec = n
	return f, in.ID, n
}

// startServe runs the helper's serve on a loopback port.
func startServe(t *testing.T, token string, port int, env ...string) {
	t.Helper()
	c := exec.Command(helperBin, "serve", "127.0.0.1:"+strconv.Itoa(port))
	c.Env = append(append(os.Environ(), podinit.TokenEnv+"="+token), env...)
	errp, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Signal(syscall.SIGTERM); c.Wait() })
	br := bufio.NewReader(errp)
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, "serving on") {
		t.Fatalf("serve said %q, %v", line, err)
	}
	go io.Copy(io.Discard, br)
}

// TestPodTransport: with the Pod's init answering, commands (stdin,
// output, status, kill), files and stats go over the pod network with
// the token from the Secret, and none through the apiserver; the Pod
// spec names the Secret, never the token.
func TestPodTransport(t *testing.T) {
	api := &countingExecer{}
	f, id, n := podNet(t, true, api)
	ctx := context.Background()
	r, err := f.d.Run(ctx, id, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "cat; echo \" $X [$" + podinit.TokenEnv + "]\"; exit 3"},
		Env: map[string]string{"X": "x"}, Stdin: strings.NewReader("in")})
	if err != nil || string(r.Stdout) != "in x []\n" || r.ExitCode != 3 {
		t.Errorf("Run = %q, %d, %v; want \"in x []\", 3", r.Stdout, r.ExitCode, err)
	}
	p := filepath.Join(t.TempDir(), "f")
	if err := f.d.WriteFile(ctx, id, p, strings.NewReader("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := f.d.Stat(ctx, id, p); err != nil || fi.Size != 4 {
		t.Errorf("Stat = %+v, %v", fi, err)
	}
	r, err = f.d.Run(ctx, id, sandbox.ExecRequest{Cmd: []string{"sleep", "30"}, Timeout: 200 * time.Millisecond})
	if err != nil || !r.TimedOut {
		t.Errorf("a command past its timeout: %+v, %v", r, err)
	}
	podN, apiN := f.d.StreamCounts()
	if podN < 4 || apiN != 0 || api.n.Load() != 0 || n.pod.Load() != podN {
		t.Errorf("streams: pod %d, apiserver %d (fallback ran %d); want all over the pod network", podN, apiN, api.n.Load())
	}
	pod, err := f.c.CoreV1().Pods(testNS).Get(ctx, objName(id), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	var ref *corev1.EnvVar
	for i, e := range c.Env {
		if e.Name == podinit.TokenEnv {
			ref = &c.Env[i]
		}
	}
	if ref == nil || ref.Value != "" || ref.ValueFrom.SecretKeyRef.Name != objName(id) || ref.ValueFrom.SecretKeyRef.Key != tokenKey || c.Command[1] != "serve" ||
		c.Ports[0].ContainerPort != podinit.Port {
		t.Errorf("sandbox container: command %v, token variable %+v, ports %v", c.Command, ref, c.Ports)
	}
}

// TestPodTransportFallback: in auto mode a Pod whose init does not answer
// gets its command through the apiserver, run once; in pod mode the
// command fails and nothing runs.
func TestPodTransportFallback(t *testing.T) {
	api := &countingExecer{}
	f, id, _ := podNet(t, false, api)
	ctx := context.Background()
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	once := []string{"sh", "-c", "echo x >> " + count}
	if r, err := f.d.Run(ctx, id, sandbox.ExecRequest{Cmd: once}); err != nil || r.ExitCode != 0 {
		t.Fatalf("Run in auto mode = %+v, %v", r, err)
	}
	if b, _ := os.ReadFile(count); string(b) != "x\n" || api.n.Load() != 1 {
		t.Errorf("auto mode ran the command %q (apiserver streams %d), want once through the apiserver", b, api.n.Load())
	}
	f.d.exec = deadPort(f.d, 1)
	if _, err := f.d.Run(ctx, id, sandbox.ExecRequest{Cmd: once}); err == nil {
		t.Error("pod mode with no init answering: Run succeeded")
	}
	if b, _ := os.ReadFile(count); string(b) != "x\n" {
		t.Errorf("pod mode ran the command: %q", b)
	}
}

// deadPort is a pod-mode netExecer on a port nothing listens on.
func deadPort(d *Driver, port int) *netExecer {
	n := newNetExecer(d, nil)
	n.port, n.settle = port, 300*time.Millisecond
	return n
}

// TestPodTransportWrongToken: an init that holds another token refuses
// the request; nothing runs and the driver does not fall back.
func TestPodTransportWrongToken(t *testing.T) {
	api := &countingExecer{}
	f, id, n := podNet(t, false, api)
	startServe(t, "not-the-sandbox-token", n.port)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	_, err := f.d.Run(context.Background(), id, sandbox.ExecRequest{Cmd: []string{"touch", marker}})
	if err == nil || !strings.Contains(err.Error(), "unauthorized") {
		t.Errorf("Run against an init with another token = %v, want unauthorized", err)
	}
	if _, serr := os.Stat(marker); !os.IsNotExist(serr) || api.n.Load() != 0 {
		t.Errorf("the command ran (stat %v, apiserver streams %d)", serr, api.n.Load())
	}
}

// TestPodTransportInitStarting: an init that starts listening only after
// the first dial (a Pod just started) still gets the command over the
// pod network, not through the apiserver.
func TestPodTransportInitStarting(t *testing.T) {
	api := &countingExecer{}
	f, id, n := podNet(t, false, api)
	n.settle = time.Minute
	sec, err := f.c.CoreV1().Secrets(testNS).Get(context.Background(), objName(id), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan sandbox.RunResult, 1)
	go func() {
		r, err := f.d.Run(context.Background(), id, sandbox.ExecRequest{Cmd: []string{"echo", "late"}})
		if err != nil {
			r.Stderr = []byte(err.Error())
		}
		done <- r
	}()
	time.Sleep(200 * time.Millisecond) // the driver is dialling meanwhile
	startServe(t, string(sec.Data[tokenKey]), n.port)
	if r := <-done; string(r.Stdout) != "late\n" || api.n.Load() != 0 {
		t.Errorf("Run = %q (%s), apiserver streams %d; want late over the pod network", r.Stdout, r.Stderr, api.n.Load())
	}
}
