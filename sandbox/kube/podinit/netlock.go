package podinit

import (
	"fmt"
	"net"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// TableName is the nftables table netlock makes in the Pod's network
// namespace.
const TableName = "bullpen"

// netlock replaces the Pod's egress rules: loopback, replies to
// connections made to the Pod (published ports) and the allowed IPv4
// CIDRs pass; every other packet the Pod sends is dropped. It runs in an
// init container that holds NET_ADMIN; the sandbox's commands never do,
// so they cannot undo it, and no NetworkPolicy support in the CNI is
// needed.
func netlock(cidrs []string) error {
	allowed := make([]*net.IPNet, 0, len(cidrs))
	for _, s := range cidrs {
		_, n, err := net.ParseCIDR(s)
		if err != nil || n.IP.To4() == nil {
			return codedError{ExitInvalid, fmt.Errorf("netlock: %q is not an IPv4 CIDR", s)}
		}
		allowed = append(allowed, n)
	}
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("netlock: %w", err)
	}
	t := &nftables.Table{Name: TableName, Family: nftables.TableFamilyINet}
	c.AddTable(t)
	c.DelTable(t) // replace one a previous run left
	t = c.AddTable(t)
	drop := nftables.ChainPolicyDrop
	ch := c.AddChain(&nftables.Chain{Name: "output", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityFilter, Policy: &drop})
	add := func(e ...expr.Any) { c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: e}) }
	lo := make([]byte, unix.IFNAMSIZ)
	copy(lo, "lo")
	add(&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1}, &expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: lo},
		&expr.Verdict{Kind: expr.VerdictAccept})
	add(&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binaryutil.NativeEndian.PutUint32(expr.CtStateBitESTABLISHED | expr.CtStateBitRELATED),
			Xor:  binaryutil.NativeEndian.PutUint32(0)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(0)},
		&expr.Verdict{Kind: expr.VerdictAccept})
	for _, n := range allowed {
		add(&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1}, &expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV4}},
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: []byte(n.Mask), Xor: make([]byte, 4)},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte(n.IP.To4())},
			&expr.Verdict{Kind: expr.VerdictAccept})
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("netlock: nftables: %w", err)
	}
	return nil
}
