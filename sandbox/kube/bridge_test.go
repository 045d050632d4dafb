package kube

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/kube/podinit"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// unixHTTP serves body over HTTP on a unix socket in a temporary
// directory and returns its path.
func unixHTTP(t *testing.T, body string) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "bullpen.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(body)) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sock
}

// TestBridgeOverPodNetwork: a sandbox given a claim mount and a bridge
// by Attach is restarted with the claim mounted read-only and its init
// told the bridge port; a command's HTTP request to the bridge's
// loopback port reaches the unix socket on this side, through the init
// over the pod network. Attaching the same port with another socket
// (another replica's) records it without a restart.
func TestBridgeOverPodNetwork(t *testing.T) {
	f := newFake(t)
	f.d.cfg.Mounts = map[string]string{"/opt/bullpen/clis": "bullpen-clis"}
	ctx := context.Background()
	in, err := f.d.Create(ctx, sandbox.Spec{Image: "host", Workdir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	n := newNetExecer(f.d, nil)
	n.port = freePort(t)
	f.d.exec = n
	sock := unixHTTP(t, "hello from bullpen")
	bp := freePort(t)
	mounts := []sandbox.Mount{{HostPath: "/var/lib/bullpen/clis", Path: "/opt/bullpen/clis"}}
	if err := f.d.Attach(ctx, in.ID, mounts, []sandbox.Bridge{{Port: bp, HostSocket: sock}}); err != nil {
		t.Fatalf("Attach: %v", err)
	}
	if !f.sawEvent(sandbox.EventStopped, in.ID) {
		t.Fatal("Attach did not restart the running sandbox")
	}
	pods := f.c.CoreV1().Pods(testNS)
	pod, err := pods.Get(ctx, objName(in.ID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkMountedClaim(t, pod, "bullpen-clis", "/opt/bullpen/clis")
	env := pod.Spec.Containers[0].Env
	if len(env) < 2 || env[len(env)-2].Name != podinit.BridgeEnv || env[len(env)-2].Value != strconv.Itoa(bp) || env[len(env)-1].Name != podinit.TokenEnv {
		t.Fatalf("the init's environment does not end with the bridge ports and the token: %+v", env)
	}
	pod.Status.PodIP = "127.0.0.1"
	if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	sec, err := f.c.CoreV1().Secrets(testNS).Get(ctx, objName(in.ID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	startServe(t, string(sec.Data[tokenKey]), n.port, podinit.BridgeEnv+"="+strconv.Itoa(bp))
	url := "http://127.0.0.1:" + strconv.Itoa(bp) + "/"
	for i := range 3 { // several connections, each a request of its own
		r, err := f.d.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"curl", "-sS", "--max-time", "20", url}})
		if err != nil || r.ExitCode != 0 || string(r.Stdout) != "hello from bullpen" {
			t.Fatalf("request %d through the bridge: %q %q exit %d, %v", i, r.Stdout, r.Stderr, r.ExitCode, err)
		}
	}

	other := unixHTTP(t, "hello from the other replica")
	f.mu.Lock()
	f.events = nil
	f.mu.Unlock()
	if err := f.d.Attach(ctx, in.ID, mounts, []sandbox.Bridge{{Port: bp, HostSocket: other}}); err != nil {
		t.Fatal(err)
	}
	if f.sawEvent(sandbox.EventStopped, in.ID) {
		t.Fatal("a new socket on the same port restarted the sandbox")
	}
	got, err := f.d.Get(ctx, in.ID)
	if err != nil || len(got.Bridges) != 1 || got.Bridges[0].HostSocket != other {
		t.Fatalf("the record's bridges: %+v, %v", got.Bridges, err)
	}
}

func checkMountedClaim(t *testing.T, pod *corev1.Pod, claim, path string) {
	t.Helper()
	vol := ""
	for _, v := range pod.Spec.Volumes {
		if pvc := v.PersistentVolumeClaim; pvc != nil && pvc.ClaimName == claim {
			if !pvc.ReadOnly {
				t.Fatalf("claim %s is not read-only", claim)
			}
			vol = v.Name
		}
	}
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		if m.Name == vol && m.MountPath == path && m.ReadOnly {
			return
		}
	}
	t.Fatalf("claim %s is not mounted read-only at %s: %+v", claim, path, pod.Spec.Containers[0].VolumeMounts)
}

// TestMountsAndBridgesRefused: a host directory no claim stands for,
// a bridge on the init's port or twice on one port, and any bridge over
// the apiserver transport are refused with what is missing, and nothing
// is made.
func TestMountsAndBridgesRefused(t *testing.T) {
	f := newFake(t)
	f.d.cfg.Mounts = map[string]string{"/opt/bullpen/clis": "bullpen-clis"}
	ctx := context.Background()
	sock := "/run/bullpen/agent.sock"
	for _, tc := range []struct {
		sp   sandbox.Spec
		code string
		says string
	}{
		{sandbox.Spec{Mounts: []sandbox.Mount{{HostPath: "/etc", Path: "/mnt/etc"}}}, bullpen.EUNSUPPORTED, "no claim is configured"},
		{sandbox.Spec{Bridges: []sandbox.Bridge{{Port: 4100, HostSocket: sock}}}, bullpen.EUNSUPPORTED, "apiserver transport"},
	} {
		_, err := f.d.Create(ctx, tc.sp)
		if bullpen.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Create(%+v) = %v, want %s saying %q", tc.sp, err, tc.code, tc.says)
		}
	}
	f.d.exec = newNetExecer(f.d, nil)
	for _, bs := range [][]sandbox.Bridge{{{Port: podinit.Port, HostSocket: sock}}, {{Port: 4100, HostSocket: sock}, {Port: 4100, HostSocket: sock}},
		{{Port: 0, HostSocket: sock}}, {{Port: 4100, HostSocket: "relative.sock"}}} {
		if _, err := f.d.Create(ctx, sandbox.Spec{Bridges: bs}); bullpen.ErrorCode(err) != bullpen.EINVALID {
			t.Errorf("Create with bridges %+v = %v, want invalid", bs, err)
		}
	}
	list, err := f.c.CoreV1().Pods(testNS).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Fatalf("refused creates left %d pods (%v)", len(list.Items), err)
	}
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
