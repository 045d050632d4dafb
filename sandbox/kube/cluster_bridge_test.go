package kube_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/kube/podinit"
)

// TestClusterBridgeAttack: on the real cluster, a sandbox with network
// "none" and a bridge reaches a unix socket of this process through its
// init (an HTTP request to 127.0.0.1:4100 from a command gets the
// socket's answer). Another sandbox, allowed to reach the first one's
// Pod IP, gets nothing from it: the bridge port is not on the Pod IP,
// and bridge requests to its init without the token, or with a wrong
// one, are refused.
func TestClusterBridgeAttack(t *testing.T) {
	d, env := clusterDriver(t)
	ctx := context.Background()
	sock := filepath.Join(t.TempDir(), "bullpen.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	const canary = "bridge-canary-5b1e"
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(canary)) })}
	go srv.Serve(ln)
	defer srv.Close()
	victim, err := d.Create(ctx, sandbox.Spec{Image: "host", Bridges: []sandbox.Bridge{{Port: 4100, HostSocket: sock}}})
	if err != nil {
		t.Fatal(err)
	}
	get := `exec 3<>/dev/tcp/$0/$1 && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && cat <&3`
	r, err := d.Run(ctx, victim.ID, sandbox.ExecRequest{Cmd: []string{"timeout", "20", "bash", "-c", get, "127.0.0.1", "4100"}})
	if err != nil || !strings.Contains(string(r.Stdout), canary) {
		t.Fatalf("the bridge from inside: %q %q exit %d, %v", r.Stdout, r.Stderr, r.ExitCode, err)
	}
	pod, _ := podOf(t, env, victim.ID)
	ip := pod.Status.PodIP
	attacker, err := d.Create(ctx, sandbox.Spec{Image: "host", Network: sandbox.NetworkPolicy{Allow: []string{ip + "/32"}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err = d.Run(ctx, attacker.ID, sandbox.ExecRequest{Cmd: []string{"timeout", "10", "bash", "-c", get, ip, "4100"}})
	if err != nil || strings.Contains(string(r.Stdout), canary) || r.ExitCode == 0 {
		t.Errorf("the bridge port on the Pod IP from another sandbox: %q exit %d, %v", r.Stdout, r.ExitCode, err)
	}
	for name, token := range map[string]string{"no token": "", "wrong token": strings.Repeat("0", 64)} {
		if err := d.WriteFile(ctx, attacker.ID, "/home/sandbox/req", bytes.NewReader(podinit.EncodeRequest(token, []string{"bridge", "4100"})), 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := d.Run(ctx, attacker.ID, sandbox.ExecRequest{Cmd: []string{"timeout", "10", "bash", "-c",
			`exec 3<>/dev/tcp/$0/$1 && cat req >&3 && cat <&3`, ip, "7999"}})
		if err != nil || len(r.Stdout) == 0 || r.Stdout[0] != 'r' {
			t.Errorf("%s: a bridge request from another sandbox got %q (exit %d, %v), want a refusal", name, r.Stdout, r.ExitCode, err)
		}
	}
}
