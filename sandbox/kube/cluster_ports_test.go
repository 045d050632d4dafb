package kube_test

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/kube/podinit"
)

// TestClusterPorts: a port published by a sandbox, even one with network
// none, answers at the address the driver gives (the Pod's IP, where the
// Bullpen server's port proxy dials); a revoked port is no longer
// listed, and bad ports are refused.
func TestClusterPorts(t *testing.T) {
	d, _ := clusterDriver(t)
	ctx := context.Background()
	bin := filepath.Join(t.TempDir(), "echoserver")
	build := exec.Command("go", "build", "-o", bin, "./testdata/echoserver")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the echo server: %v: %s", err, out)
	}
	in, err := d.Create(ctx, sandbox.Spec{Image: "host"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := d.WriteFile(ctx, in.ID, "/home/sandbox/echoserver", f, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := d.Exec(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"/home/sandbox/echoserver", "8080"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if line, err := bufio.NewReader(p.Stdout()).ReadString('\n'); err != nil || line != "listening\n" {
		t.Fatalf("echo server: %q, %v", line, err)
	}
	for _, bad := range []int{0, -1, 65536, podinit.Port} {
		if _, err := d.PublishPort(ctx, in.ID, bad); !bullpen.IsCode(err, bullpen.EINVALID) {
			t.Fatalf("publish port %d: %v", bad, err)
		}
	}
	pi, err := d.PublishPort(ctx, in.ID, 8080)
	if err != nil {
		t.Fatal(err)
	}
	if pi.Port != 8080 || !strings.HasSuffix(pi.HostAddr, ":8080") {
		t.Fatalf("published %+v", pi)
	}
	c, err := net.DialTimeout("tcp", pi.HostAddr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial the published port %s: %v", pi.HostAddr, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "echo ping\n" {
		t.Fatalf("through the published port: %q, %v", line, err)
	}
	ports, err := d.ListPorts(ctx, in.ID)
	if err != nil || len(ports) != 1 || ports[0].Port != 8080 {
		t.Fatalf("ports %+v, %v", ports, err)
	}
	if err := d.RevokePort(ctx, in.ID, 8080); err != nil {
		t.Fatal(err)
	}
	if err := d.RevokePort(ctx, in.ID, 8080); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		t.Fatalf("revoke twice: %v", err)
	}
	if ports, err := d.ListPorts(ctx, in.ID); err != nil || len(ports) != 0 {
		t.Fatalf("ports after revoke %+v, %v", ports, err)
	}
}
