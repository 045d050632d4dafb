package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// network gives allowlisted sandboxes a veth pair (host end in the router
// namespace, "eth0" in the sandbox) on a /30 from the pool, and a
// per-sandbox nftables table in the router namespace (netrules.go) that
// lets the sandbox reach only its allowed CIDRs, through the router's
// routing, and never the router itself or another sandbox. No NAT is set
// up: reaching anything beyond the router namespace needs forwarding and
// NAT configured by the operator.
type network struct {
	mu       sync.Mutex
	pool     *net.IPNet
	routerNS string // path; "" = the Manager's own namespace
	used     map[int]bool
}

func newNetwork(cidr, routerNS string) (*network, error) {
	_, pool, err := net.ParseCIDR(cidr)
	if err != nil || pool.IP.To4() == nil {
		return nil, fmt.Errorf("sandbox: NetworkCIDR %q: need an IPv4 CIDR", cidr)
	}
	ones, _ := pool.Mask.Size()
	if ones > 28 {
		return nil, fmt.Errorf("sandbox: NetworkCIDR %q is too small", cidr)
	}
	return &network{pool: pool, routerNS: routerNS, used: map[int]bool{}}, nil
}

// alloc reserves a free /30 index.
func (n *network) alloc() (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ones, _ := n.pool.Mask.Size()
	max := 1 << (30 - ones)
	for i := 0; i < max; i++ {
		if !n.used[i] {
			n.used[i] = true
			return i, nil
		}
	}
	return -1, errors.New("sandbox: network pool exhausted")
}

func (n *network) reserve(i int) { n.mu.Lock(); n.used[i] = true; n.mu.Unlock() }
func (n *network) release(i int) { n.mu.Lock(); delete(n.used, i); n.mu.Unlock() }

// addrs returns the host and sandbox addresses of /30 number i.
func (n *network) addrs(i int) (host, sb net.IP) {
	base := binary.BigEndian.Uint32(n.pool.IP.To4()) + uint32(i)*4
	host, sb = make(net.IP, 4), make(net.IP, 4)
	binary.BigEndian.PutUint32(host, base+1)
	binary.BigEndian.PutUint32(sb, base+2)
	return host, sb
}

func hostIfName(id string) string   { return "bpv" + id[len(id)-12:] }
func nftTableName(id string) string { return "bullpen_" + id }

func (n *network) routerHandle() (*netlink.Handle, error) {
	if n.routerNS == "" {
		return netlink.NewHandle()
	}
	ns, err := netns.GetFromPath(n.routerNS)
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	return netlink.NewHandleAt(ns)
}

// nft returns an nftables connection to the router namespace and a func
// that closes it (the namespace fd must stay open while it is used).
func (n *network) nft() (*nftables.Conn, func(), error) {
	if n.routerNS == "" {
		c, err := nftables.New()
		return c, func() {}, err
	}
	f, err := os.Open(n.routerNS)
	if err != nil {
		return nil, nil, err
	}
	c, err := nftables.New(nftables.WithNetNSFd(int(f.Fd())), nftables.AsLasting())
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return c, func() { _ = c.CloseLasting(); f.Close() }, nil
}

// setup wires sandbox id (whose network namespace is open as nsfd) to /30
// number idx and installs its egress rules.
func (n *network) setup(id string, idx int, nsfd int, allowed []*net.IPNet) (err error) {
	defer func() {
		if err != nil {
			n.teardown(id)
			err = fmt.Errorf("sandbox: network: %w", err)
		}
	}()
	hostIP, sbIP := n.addrs(idx)
	mask := net.CIDRMask(30, 32)
	hostIf := hostIfName(id)
	rh, err := n.routerHandle()
	if err != nil {
		return err
	}
	defer rh.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: hostIf}, PeerName: "eth0", PeerNamespace: netlink.NsFd(nsfd)}
	if err := rh.LinkAdd(veth); err != nil {
		return fmt.Errorf("add veth: %w", err)
	}
	hl, err := rh.LinkByName(hostIf)
	if err != nil {
		return err
	}
	if err := rh.AddrAdd(hl, &netlink.Addr{IPNet: &net.IPNet{IP: hostIP, Mask: mask}}); err != nil {
		return fmt.Errorf("host address: %w", err)
	}
	if err := n.installRules(id, hostIf, allowed); err != nil {
		return err
	}
	if err := rh.LinkSetUp(hl); err != nil {
		return err
	}
	sh, err := netlink.NewHandleAt(netns.NsHandle(nsfd))
	if err != nil {
		return err
	}
	defer sh.Close()
	sl, err := sh.LinkByName("eth0")
	if err != nil {
		return err
	}
	if err := sh.AddrAdd(sl, &netlink.Addr{IPNet: &net.IPNet{IP: sbIP, Mask: mask}}); err != nil {
		return fmt.Errorf("sandbox address: %w", err)
	}
	if err := sh.LinkSetUp(sl); err != nil {
		return err
	}
	if err := sh.RouteAdd(&netlink.Route{LinkIndex: sl.Attrs().Index, Gw: hostIP}); err != nil {
		return fmt.Errorf("default route: %w", err)
	}
	return nil
}

// teardown removes the sandbox's veth pair and nftables table (idempotent).
func (n *network) teardown(id string) {
	if rh, err := n.routerHandle(); err == nil {
		if l, err := rh.LinkByName(hostIfName(id)); err == nil {
			_ = rh.LinkDel(l)
		}
		rh.Close()
	}
	if c, done, err := n.nft(); err == nil {
		tables, _ := c.ListTablesOfFamily(nftables.TableFamilyINet)
		for _, t := range tables {
			if t.Name == nftTableName(id) {
				c.DelTable(t)
				_ = c.Flush()
			}
		}
		done()
	}
}

// exists reports whether the sandbox's veth or table is still there.
func (n *network) exists(id string) bool {
	if rh, err := n.routerHandle(); err == nil {
		defer rh.Close()
		if _, err := rh.LinkByName(hostIfName(id)); err == nil {
			return true
		}
	}
	if c, done, err := n.nft(); err == nil {
		defer done()
		tables, _ := c.ListTablesOfFamily(nftables.TableFamilyINet)
		for _, t := range tables {
			if t.Name == nftTableName(id) {
				return true
			}
		}
	}
	return false
}
