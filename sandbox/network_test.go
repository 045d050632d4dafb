package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// newRouterNS makes a network namespace for the test with a veth link
// holding addrs; all sandbox traffic of the test stays inside it.
func newRouterNS(t *testing.T, addrs ...string) string {
	t.Helper()
	name := fmt.Sprintf("bpt-%d-%d", time.Now().UnixNano()%1e9, len(addrs))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	ns, err := netns.NewNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	defer netns.Set(orig)
	ns.Close()
	t.Cleanup(func() { netns.DeleteNamed(name) })
	lo, _ := netlink.LinkByName("lo")
	netlink.LinkSetUp(lo)
	// A veth pair (dummy links may be missing from the kernel) holds the
	// listener addresses.
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "bpt0"}, PeerName: "bpt1"}); err != nil {
		t.Fatal(err)
	}
	d, err := netlink.LinkByName("bpt0")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		ad, _ := netlink.ParseAddr(a + "/32")
		if err := netlink.AddrAdd(d, ad); err != nil {
			t.Fatal(err)
		}
	}
	netlink.LinkSetUp(d)
	if p, err := netlink.LinkByName("bpt1"); err == nil {
		netlink.LinkSetUp(p)
	}
	return "/var/run/netns/" + name
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
	router := newRouterNS(t, "10.199.0.1", "10.199.0.2", "10.199.0.3")
	for _, a := range []string{"10.199.0.1:8080", "10.199.0.2:8080", "10.199.0.3:8080"} {
		listenIn(t, router, a)
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
