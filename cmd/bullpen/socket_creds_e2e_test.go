package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// credsProbe runs inside an agent's sandbox: it sends /mcp requests over
// the bridge (127.0.0.1:4100) with the credentials given on the command
// line in every combination an attacker would try, and prints one JSON
// object: case name → HTTP status.
const credsProbe = `
import http.client, json, sys
own, other, perm, admin = sys.argv[1:5]
init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}})
def post(body):
    return json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "post_message", "arguments": {"channel": "general", "body": body}}})
cases = {
    "own bearer":                ("/mcp", {"Authorization": "Bearer " + own}, init),
    "own x-api-key":             ("/mcp", {"X-Api-Key": own}, init),
    "junk key + other's bearer": ("/mcp", {"X-Api-Key": "junk", "Authorization": "Bearer " + other}, post("HIJACK-1")),
    "own key + other's bearer":  ("/mcp", {"X-Api-Key": own, "Authorization": "Bearer " + other}, post("HIJACK-2")),
    "other's bearer":            ("/mcp", {"Authorization": "Bearer " + other}, post("HIJACK-3")),
    "own bearer + other's goog": ("/mcp", {"Authorization": "Bearer " + own, "X-Goog-Api-Key": other}, post("HIJACK-4")),
    "own bearer + cookie":       ("/mcp", {"Authorization": "Bearer " + own, "Cookie": "bullpen_session=" + other}, post("HIJACK-5")),
    "own bearer + ?key=":        ("/mcp?key=" + other, {"Authorization": "Bearer " + own}, post("HIJACK-6")),
    "own permanent token":       ("/mcp", {"Authorization": "Bearer " + perm}, post("HIJACK-7")),
    "admin's token":             ("/mcp", {"Authorization": "Bearer " + admin}, init),
    "gateway, other's key":      ("/anthropic/v1/messages", {"X-Api-Key": "junk", "Authorization": "Bearer " + other}, "{}"),
}
out = {}
for name, (path, headers, body) in cases.items():
    c = http.client.HTTPConnection("127.0.0.1", 4100, timeout=30)
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    h.update(headers)
    c.request("POST", path, body=body, headers=h)
    out[name] = c.getresponse().status
    c.close()
print(json.dumps(out))
`

// TestSocketOneCredential attacks an agent's socket from inside its
// sandbox: a request that carries any credential other than the agent's
// own running turn's token, in any header or in the query, is refused
// with 403 before /mcp or the gateway sees it, and nothing is posted as
// another agent. The own turn token works.
func TestSocketOneCredential(t *testing.T) {
	o := newSocketOffice(t)
	a, permA := o.hireBuiltin("alpha")
	b, _ := o.hireBuiltin("bravo")
	tokA, tokB := o.turnToken(a), o.turnToken(b)
	since := o.events(0)
	lines, wait := o.runInside(a, credsProbe, tokA, tokB, permA, o.api.token)
	var got map[string]int
	for line := range lines {
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("probe printed %q", line)
		}
	}
	if stderr, code := wait(); code != 0 {
		t.Fatalf("probe exited %d: %s", code, stderr)
	}
	want := map[string]int{"own bearer": 200, "own x-api-key": 200}
	for name, st := range got {
		w, ok := want[name]
		if !ok {
			w = http.StatusForbidden
		}
		if st != w {
			t.Errorf("%s: status %d, want %d", name, st, w)
		}
	}
	if len(got) != 11 {
		t.Errorf("probe answered %d cases: %v", len(got), got)
	}
	for _, ev := range o.events(since[len(since)-1].Seq) {
		if ev.Type != bullpen.EventMessagePosted {
			continue
		}
		var m bullpen.Message
		json.Unmarshal(ev.Payload, &m)
		if strings.Contains(m.Body, "HIJACK") {
			t.Errorf("posted through the socket of @alpha: %q by member %d (@bravo is %d)", m.Body, m.AuthorID, b.ID)
		}
	}
}
