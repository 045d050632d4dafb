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
// outside address cannot reach it from its sandbox until a human approves
// that policy (an agent cannot); then it can; a policy change voids the
// approval, and the sandbox is without network again.
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
	var hired bullpen.Hired
	o.api.do("POST", "/agents", map[string]any{"spec": role}, http.StatusCreated, &hired)
	eng := hired.Agent.Member
	if na := o.network(eng); na == nil || na.State != bullpen.NetworkUnasked {
		t.Fatalf("network approval after hire = %+v, want unasked", na)
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

	// Before approval: no network, one notice, and a request for a human.
	if n := turn("BLOCKED"); !strings.Contains(n, "not approved by a human") {
		t.Fatalf("no notice that the CLI runs without network: %q", n)
	}
	na := o.network(eng)
	if na == nil || na.State != bullpen.ApprovalPending || na.ApprovalID == 0 {
		t.Fatalf("network approval after the first turn = %+v, want pending", na)
	}
	// An agent cannot approve it, not even the agent itself.
	agentAPI := apiClient{t: t, base: o.api.base, token: hired.Token}
	agentAPI.do("POST", "/approvals/"+itoa64(na.ApprovalID), map[string]any{"decision": "approve"}, http.StatusForbidden, nil)
	turn("BLOCKED")

	// A human approves: the CLI's sandbox reaches the allowed address.
	o.api.do("POST", "/approvals/"+itoa64(na.ApprovalID), map[string]any{"decision": "approve"}, http.StatusOK, nil)
	if na := o.network(eng); na == nil || na.State != bullpen.ApprovalApproved || na.AnsweredBy != o.me.ID {
		t.Fatalf("network approval after a human's = %+v, want approved by %d", na, o.me.ID)
	}
	if n := turn("REACHED hello"); n != "" {
		t.Errorf("a network notice after approval: %q", n)
	}

	// A policy change voids the approval.
	sb := role.Sandbox
	sb.Allow = []string{outsideAddr + "/32", outsideNet + ".1/32"}
	o.api.do("PATCH", "/agents/"+itoa64(eng.ID), map[string]any{"sandbox": sb}, http.StatusOK, nil)
	if na := o.network(eng); na == nil || na.State != bullpen.NetworkUnasked {
		t.Fatalf("network approval after a policy change = %+v, want unasked", na)
	}
	turn("BLOCKED")
}

// network is the agent's network approval as the API shows it.
func (o *cliOffice) network(agent bullpen.Member) *bullpen.NetworkApproval {
	o.t.Helper()
	var v bullpen.AgentView
	o.api.do("GET", "/agents/"+itoa64(agent.ID), nil, http.StatusOK, &v)
	return v.Network
}
