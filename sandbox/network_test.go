package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
	"github.com/vishvananda/netns"
)

// newRouterNS makes a router network namespace for the test and, behind
// it, an "outside" namespace holding addrs on a veth; the router forwards
// to them. All sandbox traffic of the test stays inside these namespaces.
// The sandboxes' allowlists grant egress through the router, never the
// router itself, so listeners belong in the outside namespace.
func newRouterNS(t *testing.T, addrs ...string) (router, outside string) {
	t.Helper()
	name := fmt.Sprintf("bpt-%d-%d", time.Now().UnixNano()%1e9, len(addrs))
	router, outside = addNetNS(t, name+"r"), addNetNS(t, name+"o")
	script := `set -e
ip link add bpt0 type veth peer name bpt1 netns ` + name + `o
ip link set lo up; ip link set bpt0 up
ip addr add 10.198.0.1/30 dev bpt0
ip route add 10.199.0.0/24 via 10.198.0.2
echo 1 > /proc/sys/net/ipv4/ip_forward`
	nsExec(t, name+"r", script)
	script = `set -e
ip link set lo up; ip link set bpt1 up
ip addr add 10.198.0.2/30 dev bpt1
ip route add default via 10.198.0.1`
	for _, a := range addrs {
		script += "\nip addr add " + a + "/32 dev bpt1"
	}
	nsExec(t, name+"o", script)
	return router, outside
}

// addNetNS creates a named network namespace, deleted when the test ends.
func addNetNS(t *testing.T, name string) string {
	t.Helper()
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { netns.DeleteNamed(name) })
	return "/var/run/netns/" + name
}

// nsExec runs a shell script in the named network namespace.
func nsExec(t *testing.T, name, script string) {
	t.Helper()
	if out, err := exec.Command("ip", "netns", "exec", name, "sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("in netns %s: %v: %s", name, err, out)
	}
}

// listenIn starts a TCP server in the namespace at path that greets with
// its address.
func listenIn(t *testing.T, path, addr string) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, _ := netns.Get()
	defer orig.Close()
	ns, err := netns.GetFromPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	if err := netns.Set(ns); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	netns.Set(orig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello from " + addr))
			c.Close()
		}
	}()
}

const pyConnect = `
import socket, sys
for target in sys.argv[1:]:
    host, port = target.rsplit(":", 1)
    s = socket.socket(); s.settimeout(1)
    try:
        s.connect((host, int(port))); print(target, "ok", s.recv(100).decode())
    except OSError as e:
        print(target, "blocked", e)
`

func TestNetworkAllowlist(t *testing.T) {
	t.Parallel()
	router, outside := newRouterNS(t, "10.199.0.1", "10.199.0.2", "10.199.0.3")
	for _, a := range []string{"10.199.0.1:8080", "10.199.0.2:8080", "10.199.0.3:8080"} {
		listenIn(t, outside, a)
	}
	e := newEnv(t, func(c *Config) {
		c.RouterNetNS = router
		c.NetworkCIDR = "10.232.0.0/24"
		c.Resolve = func(ctx context.Context, host string) ([]net.IP, error) {
			if host == "allowed.example" {
				return []net.IP{net.ParseIP("10.199.0.3")}, nil
			}
			return nil, fmt.Errorf("no such host")
		}
	})
	ctx := context.Background()
	in := e.create(Spec{Network: NetworkPolicy{Allow: []string{"10.199.0.1/32"}, Domains: []string{"allowed.example"}}})
	if strings.Join(in.AllowedCIDRs, ",") != "10.199.0.1/32,10.199.0.3/32" {
		t.Fatalf("allowed: %v", in.AllowedCIDRs)
	}
	r := e.run(in.ID, "python3", "-c", pyConnect, "10.199.0.1:8080", "10.199.0.2:8080", "allowed.example:8080", "10.232.0.1:22", "192.0.2.1:53")
	out := string(r.Stdout)
	t.Log(out)
	for _, want := range []string{"10.199.0.1:8080 ok hello", "10.199.0.2:8080 blocked", "allowed.example:8080 ok hello from 10.199.0.3",
		"10.232.0.1:22 blocked", "192.0.2.1:53 blocked"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	// A sandbox without a policy has no route at all, even in this setup.
	none := e.create(Spec{})
	if out := string(e.run(none.ID, "python3", "-c", pyConnect, "10.199.0.1:8080").Stdout); !strings.Contains(out, "blocked") {
		t.Fatalf("no-network sandbox reached the allowlisted address: %s", out)
	}
	if e.m.pool != nil && e.m.PoolTaken() != 2 {
		t.Errorf("%d of the 2 creates used a pooled init", e.m.PoolTaken())
	}
	// Network comes back after Stop/Start.
	if err := e.m.Stop(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if e.m.net.exists(in.ID) {
		t.Fatal("veth/nft left after stop")
	}
	if err := e.m.Start(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if out := string(e.run(in.ID, "python3", "-c", pyConnect, "10.199.0.1:8080").Stdout); !strings.Contains(out, "ok hello") {
		t.Fatalf("after restart: %s", out)
	}
	_, err := e.m.Create(ctx, Spec{Network: NetworkPolicy{Domains: []string{"unknown.example"}}})
	wantCode(t, err, bullpen.EINVALID)
}

func TestPorts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id := e.create(Spec{}).ID
	srv, err := e.m.Exec(ctx, id, ExecRequest{Cmd: []string{"python3", "-m", "http.server", "8000", "--bind", "127.0.0.1"}, Workdir: "/etc"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pi, err := e.m.PublishPort(ctx, id, 8000)
	if err != nil || !strings.HasPrefix(pi.HostAddr, "127.0.0.1:") {
		t.Fatalf("publish: %+v %v", pi, err)
	}
	if again, _ := e.m.PublishPort(ctx, id, 8000); again != pi {
		t.Fatalf("republish changed address: %+v", again)
	}
	var body string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + pi.HostAddr + "/hostname")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.HasPrefix(body, "sb-") {
		t.Fatalf("proxied body %q", body)
	}
	if ps, _ := e.m.ListPorts(ctx, id); len(ps) != 1 || ps[0] != pi {
		t.Fatalf("list: %+v", ps)
	}
	if err := e.m.RevokePort(ctx, id, 8000); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + pi.HostAddr + "/hostname"); err == nil {
		t.Fatal("revoked port still answers")
	}
	if ps, _ := e.m.ListPorts(ctx, id); len(ps) != 0 {
		t.Fatalf("list after revoke: %+v", ps)
	}
}
