package sandbox

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// pyProbe connects to every host:port argument (IPv4, IPv6, zones) and
// prints "TARGET ok DATA" or "TARGET blocked ERROR". The sandbox's default
// gateway, read from /proc/net/route as an attacker would, is probed too.
const pyProbe = `
import socket, struct, sys
port = sys.argv[1]
targets = sys.argv[2:]
for line in open("/proc/net/route").read().splitlines()[1:]:
    f = line.split()
    if f[1] == "00000000":
        targets.append(socket.inet_ntoa(struct.pack("<I", int(f[2], 16))) + "|" + port)
for t in targets:
    host, p = t.rsplit("|", 1)
    try:
        ai = socket.getaddrinfo(host, int(p), type=socket.SOCK_STREAM)[0]
        s = socket.socket(ai[0], ai[1]); s.settimeout(1)
        s.connect(ai[4]); print(t, "ok", s.recv(100).decode(errors="replace"))
    except OSError as e:
        print(t, "blocked", e)
`

// hostListener listens on 0.0.0.0 and [::] (same random port), greets
// every connection with "HOST" and counts them.
func hostListener(t *testing.T) (port string, accepted *atomic.Int64) {
	t.Helper()
	accepted = new(atomic.Int64)
	ln4, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	port = strconv.Itoa(ln4.Addr().(*net.TCPAddr).Port)
	lns := []net.Listener{ln4}
	if ln6, err := net.Listen("tcp6", "[::]:"+port); err == nil {
		lns = append(lns, ln6)
	}
	for _, ln := range lns {
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				c.Write([]byte("HOST"))
				c.Close()
			}
		}()
	}
	return port, accepted
}

// hostAddrs lists every address of every host interface, as the
// sandbox's "host|port" probe targets: IPv6 link-local ones with the
// sandbox's own interface as zone (the only link it has).
func hostAddrs(t *testing.T, port string) []string {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ifc := range ifs {
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			ip := a.(*net.IPNet).IP
			h := ip.String()
			if ip.IsLinkLocalUnicast() && ip.To4() == nil {
				h += "%eth0"
			}
			out = append(out, h+"|"+port)
		}
	}
	return out
}

// TestSecurityAllowlistNeverReachesHost: a sandbox allowed 0.0.0.0/0 (what
// a role's "network: open" gives) in the host's own network namespace
// cannot reach a host service bound to 0.0.0.0 through any host address,
// nor another sandbox; the host cannot reach into a sandbox but through a
// published port; and the allowlist still grants egress to an outside
// host (a network namespace of the test behind the host's routing).
func TestSecurityAllowlistNeverReachesHost(t *testing.T) {
	t.Parallel()
	outsideNS, outsideIf := outsideHost(t, "10.237.41.0")
	listenIn(t, outsideNS, "10.237.41.2:9000")
	e := newEnv(t, func(c *Config) { c.NetworkCIDR = "10.237.40.0/24" })
	open := Spec{Network: NetworkPolicy{Allow: []string{"0.0.0.0/0"}}}
	a, b := e.create(open), e.create(open)
	port, accepted := hostListener(t)
	// Forwarding on, as on a host that gives sandboxes egress, but only
	// for packets arriving on the links of this test (the host's global
	// setting is left alone). Every probe below stays on this host.
	enableForwarding(t, hostIfName(a.ID), hostIfName(b.ID), outsideIf)

	// Sandbox b serves on all its addresses.
	srv := e.startServer(b.ID, 8081)
	defer srv.Close()
	if out := e.py(b.ID, probeCall("8081", "127.0.0.1|8081")); !strings.Contains(out, "ok B") {
		t.Fatalf("b's own server does not answer: %s", out)
	}
	sa, sb := e.sandboxNet(a.ID), e.sandboxNet(b.ID)
	targets := append(hostAddrs(t, port), "127.0.0.1|"+port, "::1|"+port,
		sb.host.String()+"|"+port, sb.sb.String()+"|8081", sa.host.String()+"|8081",
		"10.237.40.3|"+port, "10.237.40.7|"+port, "224.0.0.1|"+port)
	for _, ll := range linkLocals(t, hostIfName(a.ID)) {
		targets = append(targets, ll+"%eth0|"+port)
	}
	out := e.py(a.ID, probeCall(port, targets...))
	t.Logf("probes from a:\n%s", out)
	lines := strings.Split(out, "\n")
	if len(lines) < len(targets)+1 {
		t.Fatalf("%d probe results for %d targets", len(lines), len(targets)+1)
	}
	for _, l := range lines {
		if !strings.Contains(l, " blocked ") {
			t.Errorf("sandbox reached %s", l)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("host listener accepted %d connections from the sandbox", n)
	}
	// The host cannot open a connection into sandbox b either.
	if c, err := net.DialTimeout("tcp", sb.sb.String()+":8081", time.Second); err == nil {
		c.Close()
		t.Errorf("host connected to sandbox b's address directly")
	}
	// But a published port reaches b.
	pi, err := e.m.PublishPort(t.Context(), b.ID, 8081)
	if err != nil {
		t.Fatal(err)
	}
	if got := dialRead(t, pi.HostAddr); got != "B" {
		t.Errorf("published port answered %q, want B", got)
	}
	// Positive control: the allowlist reaches an outside host through the
	// host's routing.
	if out := e.py(a.ID, probeCall(port, "10.237.41.2|9000")); !strings.Contains(out, "10.237.41.2|9000 ok hello") {
		t.Errorf("allowlisted outside host not reached: %s", out)
	}
}

func probeCall(port string, targets ...string) string {
	args := append([]string{port}, targets...)
	return "import sys; sys.argv = [''] + " + pyList(args) + "\n" + pyProbe
}

func pyList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// sbAddrs are a sandbox's veth addresses: host end and sandbox end.
type sbAddrs struct{ host, sb net.IP }

func (e *testEnv) sandboxNet(id string) sbAddrs {
	e.t.Helper()
	s, err := e.m.lookup(id)
	if err != nil {
		e.t.Fatal(err)
	}
	s.mu.Lock()
	idx := s.meta.NetIndex
	s.mu.Unlock()
	if idx < 0 {
		e.t.Fatalf("%s has no network", id)
	}
	h, sb := e.m.net.addrs(idx)
	return sbAddrs{h, sb}
}

// startServer runs a TCP server in the sandbox on 0.0.0.0:port that greets
// with "B", and waits until it listens.
func (e *testEnv) startServer(id string, port int) io.Closer {
	e.t.Helper()
	code := fmt.Sprintf(`import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", %d)); s.listen(16); print("listening", flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"B"); c.close()`, port)
	p, err := e.m.Exec(e.t.Context(), id, ExecRequest{Cmd: []string{"python3", "-c", code}})
	if err != nil {
		e.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(e.sh(id, "cat /proc/net/tcp"), fmt.Sprintf(":%04X 00000000:0000 0A", port)) {
			return p
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Close()
	e.t.Fatalf("server in %s did not start", id)
	return nil
}

func dialRead(t *testing.T, addr string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.SetDeadline(time.Now().Add(2 * time.Second))
			b, _ := io.ReadAll(c)
			c.Close()
			if len(b) > 0 || time.Now().After(deadline) {
				return string(b)
			}
		} else if time.Now().After(deadline) {
			return "error: " + err.Error()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func linkLocals(t *testing.T, ifName string) []string {
	t.Helper()
	ifc, err := net.InterfaceByName(ifName)
	if err != nil {
		t.Fatal(err)
	}
	addrs, _ := ifc.Addrs()
	var out []string
	for _, a := range addrs {
		if ip := a.(*net.IPNet).IP; ip.IsLinkLocalUnicast() && ip.To4() == nil {
			out = append(out, ip.String())
		}
	}
	return out
}

// outsideHost makes a network namespace linked to the host by a veth
// (host end NET.1/30, namespace end NET.2/30, default route back to the
// host): an "outside" destination reachable through the host's routing,
// and nothing beyond it.
func outsideHost(t *testing.T, netAddr string) (nsPath, hostIf string) {
	t.Helper()
	name := fmt.Sprintf("bpo-%d", time.Now().UnixNano()%1e9)
	hostIf = "bpo" + name[4:10]
	base := strings.TrimSuffix(netAddr, ".0")
	nsPath = addNetNS(t, name)
	if out, err := execCmd("ip", "link", "add", hostIf, "type", "veth", "peer", "name", "eth0", "netns", name); err != nil {
		t.Fatalf("veth: %v: %s", err, out)
	}
	t.Cleanup(func() { execCmd("ip", "link", "del", hostIf) })
	for _, args := range [][]string{{"addr", "add", base + ".1/30", "dev", hostIf}, {"link", "set", hostIf, "up"}} {
		if out, err := execCmd("ip", args...); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	nsExec(t, name, "set -e; ip link set lo up; ip link set eth0 up; ip addr add "+base+".2/30 dev eth0; ip route add default via "+base+".1")
	return nsPath, hostIf
}

// enableForwarding turns on IPv4 forwarding for packets arriving on the
// given links only (the host's global setting is left alone).
func enableForwarding(t *testing.T, ifs ...string) {
	t.Helper()
	for _, ifc := range ifs {
		if err := os.WriteFile("/proc/sys/net/ipv4/conf/"+ifc+"/forwarding", []byte("1"), 0); err != nil {
			t.Fatal(err)
		}
	}
}

func execCmd(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).CombinedOutput()
}
