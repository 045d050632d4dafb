package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/view"
)

// outsideAddr is a host behind this machine's routing (a network
// namespace of the test), which a CLI role's allowlist names.
const (
	outsideNet  = "10.238.51"
	outsideAddr = outsideNet + ".2"
)

// probeCLI is a "claude-code" that, as the agent CLI's own command would,
// tries to reach the outside host from inside its sandbox, and reports
// what it got on stderr (the turn's failure notice quotes it).
const probeCLI = `cat >/dev/null
python3 - >&2 <<'PYEOF'
import socket, time
res = "BLOCKED"
for i in range(12):
    s = socket.socket(); s.settimeout(1)
    try:
        s.connect(("` + outsideAddr + `", 9000)); res = "REACHED " + s.recv(100).decode(); break
    except OSError as e:
        res = "BLOCKED %s" % e
    time.sleep(0.25)
print(res)
PYEOF
exit 3
`

// outsideListener makes a network namespace with outsideAddr, routed by
// the host, and a TCP listener on outsideAddr:9000 in it. It returns the
// host's end of the link.
func outsideListener(t *testing.T) string {
	t.Helper()
	name := "bpn" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
	hostIf := name + "h"
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
	}
	run("ip", "netns", "add", name)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	run("ip", "link", "add", hostIf, "type", "veth", "peer", "name", "eth0", "netns", name)
	t.Cleanup(func() { exec.Command("ip", "link", "del", hostIf).Run() })
	run("ip", "addr", "add", outsideNet+".1/30", "dev", hostIf)
	run("ip", "link", "set", hostIf, "up")
	run("ip", "netns", "exec", name, "sh", "-c", "set -e; ip link set lo up; ip link set eth0 up; ip addr add "+outsideAddr+"/30 dev eth0; ip route add default via "+outsideNet+".1")
	srv := exec.Command("ip", "netns", "exec", name, "python3", "-c", `
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("`+outsideAddr+`", 9000)); s.listen(16)
while True:
    c, _ = s.accept(); c.sendall(b"hello"); c.close()
`)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	return hostIf
}

// forward turns IPv4 forwarding on for the given link and the host ends
// of this office's sandboxes (made again at each sandbox start), until
// the test ends; the host's global setting is left alone.
func forward(t *testing.T, o *cliOffice, hostIf string) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			ifs := []string{hostIf}
			if ins, err := o.m.Sandboxes.Manager().List(ctx, nil); err == nil {
				for _, in := range ins {
					ifs = append(ifs, "bpv"+in.ID[len(in.ID)-12:])
				}
			}
			for _, ifc := range ifs {
				os.WriteFile("/proc/sys/net/ipv4/conf/"+ifc+"/forwarding", []byte("1"), 0)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
}

// TestCLINetworkNeedsApproval: a CLI role whose network policy allows an
// outside address is asked for at hire, before any turn, and shown on the
// agent's card; it cannot reach the address from its sandbox until a
// human admin approves that policy (neither an agent nor a member who is
// not an admin can); then it can; a policy change voids the approval,
// asks again, and the sandbox is without network until answered.
func TestCLINetworkNeedsApproval(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (sandboxes, a network namespace)")
	}
	hostIf := outsideListener(t)
	o := startCLIOffice(t, "anthropic", "http://127.0.0.1:9", fakeClaude(t, probeCLI))
	forward(t, o, hostIf)
	role, err := o.m.Agents.Catalog().Role("starter/engineer")
	if err != nil {
		t.Fatal(err)
	}
	role.Runtime, role.Provider, role.Model = bullpen.RuntimeClaudeCode, "anthropic", "claude-sonnet-4-5"
	role.Sandbox.Network, role.Sandbox.Allow = bullpen.NetworkAllowlist, []string{outsideAddr + "/32"}
	var hired view.Hired
	o.api.do("POST", "/agents", map[string]any{"spec": role}, http.StatusCreated, &hired)
	eng := hired.Agent.Member

	// Asked at hire: pending on the card and in the approvals list, with
	// no turn and no channel, before the agent ever ran.
	na := o.network(eng)
	if na == nil || na.State != bullpen.ApprovalPending || na.ApprovalID == 0 || na.Policy != "allowlist "+outsideAddr+"/32" {
		t.Fatalf("network approval after hire = %+v, want pending for allowlist %s/32", na, outsideAddr)
	}
	if hired.Agent.Network == nil || hired.Agent.Network.ApprovalID != na.ApprovalID {
		t.Errorf("the hire's answer shows network %+v, want approval #%d", hired.Agent.Network, na.ApprovalID)
	}
	var pending struct{ Items []bullpen.Approval }
	o.api.do("GET", "/approvals?state=pending", nil, http.StatusOK, &pending)
	if len(pending.Items) != 1 || pending.Items[0].ID != na.ApprovalID || pending.Items[0].TurnID != 0 ||
		pending.Items[0].ChannelID != 0 || pending.Items[0].Tool != "cli_network" {
		t.Fatalf("pending approvals after hire = %+v, want only #%d for cli_network, outside any turn", pending.Items, na.ApprovalID)
	}

	turn := func(want string) string {
		t.Helper()
		since := o.m.Office.Hub().Last()
		o.say(0, "@"+eng.Handle+" reach the outside host")
		te, _ := o.waitTurnEnd(eng, since, 2*time.Minute)
		if !strings.Contains(te.Error, want) {
			t.Fatalf("turn ended with %q, want the probe to say %q", te.Error, want)
		}
		var notices []string
		for _, ev := range o.events(since) {
			if m, err := bullpen.MessageOf(ev); err == nil && ev.Type == bullpen.EventMessagePosted && m.AuthorID == eng.ID &&
				strings.Contains(m.Body, "runs without network") {
				notices = append(notices, m.Body)
			}
		}
		if len(notices) > 1 {
			t.Errorf("%d network notices in one turn, want at most one: %q", len(notices), notices)
		}
		return strings.Join(notices, "")
	}

	// Before approval: no network, one notice naming the request.
	if n := turn("BLOCKED"); !strings.Contains(n, "not approved by a human") || !strings.Contains(n, "#"+itoa64(na.ApprovalID)) {
		t.Fatalf("no notice that the CLI runs without network until #%d: %q", na.ApprovalID, n)
	}
	if again := o.network(eng); again == nil || again.ApprovalID != na.ApprovalID {
		t.Fatalf("the turn asked again: %+v, want still #%d", again, na.ApprovalID)
	}
	// An agent cannot approve it, not even the agent itself; nor can a
	// human who is not an admin.
	agentAPI := apiClient{t: t, base: o.api.base, token: hired.Token}
	agentAPI.do("POST", "/approvals/"+itoa64(na.ApprovalID), map[string]any{"decision": "approve"}, http.StatusForbidden, nil)
	var bob bullpen.Member
	o.api.do("POST", "/members", map[string]any{"handle": "bob", "display_name": "Bob", "kind": "human"}, http.StatusCreated, &bob)
	var tok struct {
		Secret string `json:"token"`
	}
	o.api.do("POST", "/tokens", map[string]any{"member_id": bob.ID, "name": "bob"}, http.StatusCreated, &tok)
	bobAPI := apiClient{t: t, base: o.api.base, token: tok.Secret}
	bobAPI.do("POST", "/approvals/"+itoa64(na.ApprovalID), map[string]any{"decision": "approve"}, http.StatusForbidden, nil)
	turn("BLOCKED")

	// A human admin approves: the CLI's sandbox reaches the allowed address.
	o.api.do("POST", "/approvals/"+itoa64(na.ApprovalID), map[string]any{"decision": "approve"}, http.StatusOK, nil)
	if na := o.network(eng); na == nil || na.State != bullpen.ApprovalApproved || na.AnsweredBy != o.me.ID {
		t.Fatalf("network approval after a human's = %+v, want approved by %d", na, o.me.ID)
	}
	if n := turn("REACHED hello"); n != "" {
		t.Errorf("a network notice after approval: %q", n)
	}

	// A policy change voids the approval and asks again at once.
	sb := role.Sandbox
	sb.Allow = []string{outsideAddr + "/32", outsideNet + ".1/32"}
	o.api.do("PATCH", "/agents/"+itoa64(eng.ID), map[string]any{"sandbox": sb}, http.StatusOK, nil)
	re := o.network(eng)
	if re == nil || re.State != bullpen.ApprovalPending || re.ApprovalID == na.ApprovalID || !strings.Contains(re.Policy, outsideNet+".1/32") {
		t.Fatalf("network approval after a policy change = %+v, want a new pending request for the new policy", re)
	}
	turn("BLOCKED")
	// A request still pending for a policy the agent no longer has is
	// closed by the next edit, so nobody approves it into effect.
	sb.Network, sb.Allow = bullpen.NetworkOpen, nil
	o.api.do("PATCH", "/agents/"+itoa64(eng.ID), map[string]any{"sandbox": sb}, http.StatusOK, nil)
	var voided bullpen.Approval
	o.api.do("GET", "/approvals?state=denied", nil, http.StatusOK, &pending)
	for _, a := range pending.Items {
		if a.ID == re.ApprovalID {
			voided = a
		}
	}
	if voided.ID == 0 || !strings.Contains(voided.Note, "voided") {
		t.Fatalf("request #%d for the replaced policy = %+v, want denied as voided", re.ApprovalID, voided)
	}
	o.api.do("POST", "/approvals/"+itoa64(re.ApprovalID), map[string]any{"decision": "approve"}, http.StatusConflict, nil)
	if last := o.network(eng); last == nil || last.State != bullpen.ApprovalPending || last.Policy != bullpen.NetworkOpen {
		t.Fatalf("network approval after the second edit = %+v, want pending for open", last)
	}
}

// TestCLINetworkAskedAtHire: the request is made in the hire's (or
// edit's) transaction for every CLI runtime with a network, and for
// nothing else: not the built-in loop, not a sandbox without network; a
// runtime change from the built-in loop to a CLI asks.
func TestCLINetworkAskedAtHire(t *testing.T) {
	o := startCLIOffice(t, "anthropic", "http://127.0.0.1:9", fakeClaude(t, probeCLI))
	role, err := o.m.Agents.Catalog().Role("starter/engineer")
	if err != nil {
		t.Fatal(err)
	}
	hire := func(handle, runtime, network string) bullpen.Member {
		t.Helper()
		r := role
		r.Handle, r.Runtime, r.Provider, r.Model = handle, runtime, "anthropic", "claude-sonnet-4-5"
		r.Sandbox.Network, r.Sandbox.Allow = network, nil
		if network == bullpen.NetworkAllowlist {
			r.Sandbox.Allow = []string{"10.9.8.7/32"}
		}
		var h view.Hired
		o.api.do("POST", "/agents", map[string]any{"spec": r}, http.StatusCreated, &h)
		return h.Agent.Member
	}
	for _, c := range []struct {
		handle, runtime, network string
		asked                    bool
	}{
		{"cc-open", bullpen.RuntimeClaudeCode, bullpen.NetworkOpen, true},
		{"codex-allow", bullpen.RuntimeCodex, bullpen.NetworkAllowlist, true},
		{"cc-none", bullpen.RuntimeClaudeCode, bullpen.NetworkNone, false},
		{"builtin-open", bullpen.RuntimeBuiltin, bullpen.NetworkOpen, false},
	} {
		na := o.network(hire(c.handle, c.runtime, c.network))
		if got := na != nil && na.State == bullpen.ApprovalPending && na.ApprovalID != 0; got != c.asked {
			t.Errorf("%s (%s, network %s): asked at hire = %v (%+v), want %v", c.handle, c.runtime, c.network, got, na, c.asked)
		}
	}
	var b bullpen.AgentView
	var list struct{ Items []bullpen.AgentView }
	o.api.do("GET", "/agents", nil, http.StatusOK, &list)
	for _, a := range list.Items {
		if a.Member.Handle == "builtin-open" {
			b = a
		}
	}
	o.api.do("PATCH", "/agents/"+itoa64(b.Member.ID), map[string]any{"runtime": bullpen.RuntimeCodex}, http.StatusOK, nil)
	if na := o.network(b.Member); na == nil || na.State != bullpen.ApprovalPending {
		t.Errorf("after switching the built-in agent to codex: network %+v, want a pending request", na)
	}
	var pending struct{ Items []bullpen.Approval }
	o.api.do("GET", "/approvals?state=pending", nil, http.StatusOK, &pending)
	if len(pending.Items) != 3 {
		t.Errorf("%d pending approvals, want 3 (two hires, one switch): %+v", len(pending.Items), pending.Items)
	}
}

// network is the agent's network approval as the API shows it.
func (o *cliOffice) network(agent bullpen.Member) *bullpen.NetworkApproval {
	o.t.Helper()
	var v bullpen.AgentView
	o.api.do("GET", "/agents/"+itoa64(agent.ID), nil, http.StatusOK, &v)
	return v.Network
}
