package sandbox

import (
	"fmt"
	"net"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// installRules creates the sandbox's nftables table in the router
// namespace. An allowlist grants egress through the router, never the
// router itself:
//
//   - prerouting (before any DNAT): whatever the sandbox sends to an
//     address of the router (fib daddr type local, broadcast or multicast)
//     or into the sandbox pool is rejected. The fib lookup follows address
//     changes on the host, so no list of host addresses goes stale.
//   - input: nothing from the sandbox's veth reaches a local socket.
//   - forward: replies, then the allowlist; everything else is rejected,
//     and only replies are forwarded into the sandbox.
//   - output: the router's own processes cannot open connections to the
//     sandbox either; published ports are the way in.
func (n *network) installRules(id, hostIf string, allowed []*net.IPNet) error {
	c, done, err := n.nft()
	if err != nil {
		return err
	}
	defer done()
	t := c.AddTable(&nftables.Table{Name: nftTableName(id), Family: nftables.TableFamilyINet})
	rb := ruleBuilder{c: c, t: t, iif: ifMatch(expr.MetaKeyIIFNAME, hostIf), oif: ifMatch(expr.MetaKeyOIFNAME, hostIf)}
	rb.prerouting(n.pool)
	rb.input()
	rb.forward(n.pool, allowed)
	rb.output()
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	return nil
}

// ruleBuilder adds the chains of one sandbox's table.
type ruleBuilder struct {
	c        *nftables.Conn
	t        *nftables.Table
	iif, oif []expr.Any // match the host end of the veth as input / output interface
	ch       *nftables.Chain
}

func (b *ruleBuilder) chain(name string, hook *nftables.ChainHook, prio *nftables.ChainPriority) {
	accept := nftables.ChainPolicyAccept
	b.ch = b.c.AddChain(&nftables.Chain{Name: name, Table: b.t, Type: nftables.ChainTypeFilter,
		Hooknum: hook, Priority: prio, Policy: &accept})
}

// add appends a rule made of the concatenated expression lists.
func (b *ruleBuilder) add(parts ...[]expr.Any) {
	var e []expr.Any
	for _, p := range parts {
		e = append(e, p...)
	}
	b.c.AddRule(&nftables.Rule{Table: b.t, Chain: b.ch, Exprs: e})
}

func (b *ruleBuilder) prerouting(pool *net.IPNet) {
	// Mangle priority runs before destination NAT: a DNAT'ed host port is
	// still caught by its original (local) destination.
	b.chain("prerouting", nftables.ChainHookPrerouting, nftables.ChainPriorityMangle)
	for _, typ := range []uint32{unix.RTN_LOCAL, unix.RTN_BROADCAST, unix.RTN_MULTICAST} {
		b.add(b.iif, fibDaddrType(typ), reject())
	}
	b.add(b.iif, ipv4Daddr(pool), reject())
}

func (b *ruleBuilder) input() {
	b.chain("input", nftables.ChainHookInput, nftables.ChainPriorityFilter)
	b.add(b.iif, verdict(expr.VerdictDrop))
}

func (b *ruleBuilder) forward(pool *net.IPNet, allowed []*net.IPNet) {
	b.chain("forward", nftables.ChainHookForward, nftables.ChainPriorityFilter)
	b.add(b.iif, ctReply(), verdict(expr.VerdictAccept))
	b.add(b.iif, ipv4Daddr(pool), reject())
	for _, a := range allowed {
		b.add(b.iif, ipv4Daddr(a), verdict(expr.VerdictAccept))
	}
	b.add(b.iif, reject())
	b.add(b.oif, ctReply(), verdict(expr.VerdictAccept))
	b.add(b.oif, verdict(expr.VerdictDrop))
}

func (b *ruleBuilder) output() {
	b.chain("output", nftables.ChainHookOutput, nftables.ChainPriorityFilter)
	b.add(b.oif, ctReply(), verdict(expr.VerdictAccept))
	// ICMP errors (our own rejects among them) may still tell the sandbox
	// why a packet did not go through.
	b.add(b.oif, ipv4Proto(unix.IPPROTO_ICMP), verdict(expr.VerdictAccept))
	b.add(b.oif, verdict(expr.VerdictDrop))
}

func ifMatch(key expr.MetaKey, name string) []expr.Any {
	b := make([]byte, unix.IFNAMSIZ)
	copy(b, name)
	return []expr.Any{&expr.Meta{Key: key, Register: 1}, &expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: b}}
}

func verdict(v expr.VerdictKind) []expr.Any { return []expr.Any{&expr.Verdict{Kind: v}} }

func reject() []expr.Any {
	return []expr.Any{&expr.Reject{Type: unix.NFT_REJECT_ICMPX_UNREACH, Code: unix.NFT_REJECT_ICMPX_ADMIN_PROHIBITED}}
}

// ctReply matches packets of established connections and related ones
// (ICMP errors).
func ctReply() []expr.Any {
	return []expr.Any{
		&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binaryutil.NativeEndian.PutUint32(expr.CtStateBitESTABLISHED | expr.CtStateBitRELATED),
			Xor:  binaryutil.NativeEndian.PutUint32(0)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(0)},
	}
}

// fibDaddrType matches packets whose destination the routing table
// classifies as typ (RTN_LOCAL: an address of this namespace); IPv4 and
// IPv6 alike.
func fibDaddrType(typ uint32) []expr.Any {
	return []expr.Any{
		&expr.Fib{Register: 1, FlagDADDR: true, ResultADDRTYPE: true},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(typ)},
	}
}

func ipv4Only() []expr.Any {
	return []expr.Any{&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV4}}}
}

// ipv4Daddr matches IPv4 packets to a destination in cidr.
func ipv4Daddr(cidr *net.IPNet) []expr.Any {
	return append(ipv4Only(),
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: []byte(cidr.Mask), Xor: make([]byte, 4)},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte(cidr.IP.To4())})
}

func ipv4Proto(proto byte) []expr.Any {
	return append(ipv4Only(),
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 9, Len: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}})
}
