package main

import (
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// e2bCall sends one request to the server and returns the status and body.
func e2bCall(t *testing.T, method, url string, headers map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// nativeJSON calls the native API with a Bullpen token.
func nativeJSON(t *testing.T, r runningMain, token, method, path, body string, want int) map[string]any {
	t.Helper()
	st, b := e2bCall(t, method, r.m.URL()+"api/v1/"+path, map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}, body)
	var v map[string]any
	if st != want || json.Unmarshal([]byte(b), &v) != nil {
		t.Fatalf("%s %s: %d %s", method, path, st, b)
	}
	return v
}

// envelope frames a Connect streaming message: flags, length, bytes.
func envelope(flags byte, n uint32, msg string) string {
	var h [5]byte
	h[0] = flags
	binary.BigEndian.PutUint32(h[1:], n)
	return string(h[:]) + msg
}

// Bad input through the E2B surface gets E2B's errors and changes nothing:
// another member's sandbox (by a member who is not an admin) is not found
// on the control plane, on envd and on its ports; keys of the wrong shape,
// unknown keys and ordinary Bullpen tokens are refused; malformed Connect
// frames and bodies are invalid_argument; an unknown template and bad
// bodies are 4xx. Afterwards the sandbox is as it was: running, no
// command run, no port published, and no sandbox was made.
func TestE2BBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server with sandboxes")
	}
	r := startMainWithSandboxes(t)
	member := func(handle string) (string, string) {
		m := nativeJSON(t, r, r.token, "POST", "members", `{"handle":"`+handle+`","display_name":"`+handle+`","kind":"human"}`, http.StatusCreated)
		tok := nativeJSON(t, r, r.token, "POST", "tokens", `{"member_id":`+jsonNum(m["id"])+`,"name":"e2b test"}`, http.StatusCreated)
		bp := tok["token"].(string)
		k := nativeJSON(t, r, bp, "POST", "e2b/keys", "", http.StatusCreated)
		return bp, k["key"].(string)
	}
	bobToken, bobKey := member("bob")
	_, carolKey := member("carol")
	api := strings.TrimSuffix(r.m.URL(), "/") + "/e2b"
	box := strings.TrimSuffix(r.m.URL(), "/") + "/e2b/sandbox"
	jsonHdr := func(key string) map[string]string {
		return map[string]string{"X-API-KEY": key, "Content-Type": "application/json"}
	}
	st, b := e2bCall(t, "POST", api+"/v2/sandboxes", jsonHdr(bobKey), `{"templateID":"base","timeout":300}`)
	if st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, b)
	}
	var created struct{ SandboxID string }
	_ = json.Unmarshal([]byte(b), &created)
	id := created.SandboxID
	count := func() int {
		return len(nativeJSON(t, r, r.token, "GET", "sandboxes", "", http.StatusOK)["items"].([]any))
	}
	before := count()

	expect := func(name string, st int, body string, wantSt int, wantIn ...string) {
		t.Helper()
		if st != wantSt {
			t.Errorf("%s: status %d, want %d: %s", name, st, wantSt, body)
			return
		}
		for _, w := range wantIn {
			if !strings.Contains(body, w) {
				t.Errorf("%s: %s lacks %s", name, body, w)
			}
		}
	}
	// Another member's sandbox, by its ID.
	st, b = e2bCall(t, "GET", api+"/sandboxes/"+id, jsonHdr(carolKey), "")
	expect("foreign get", st, b, 404, `"code":404`)
	st, b = e2bCall(t, "DELETE", api+"/sandboxes/"+id, jsonHdr(carolKey), "")
	expect("foreign kill", st, b, 404, `"code":404`)
	st, b = e2bCall(t, "POST", api+"/sandboxes/"+id+"/timeout", jsonHdr(carolKey), `{"timeout":1}`)
	expect("foreign timeout", st, b, 404, `"code":404`)
	st, b = e2bCall(t, "POST", api+"/sandboxes/"+id+"/pause", jsonHdr(carolKey), "")
	expect("foreign pause", st, b, 404, `"code":404`)
	st, b = e2bCall(t, "GET", api+"/v2/sandboxes", jsonHdr(carolKey), "")
	expect("foreign list", st, b, 200, "[]")
	envd := func(key, path, ct, body string) (int, string) {
		return e2bCall(t, "POST", box+path, map[string]string{"E2b-Sandbox-Id": id, "E2b-Sandbox-Port": "49983", "X-Access-Token": key, "Content-Type": ct}, body)
	}
	start := envelope(0, uint32(len(`{"process":{"cmd":"/bin/touch","args":["/tmp/pwned"]}}`)), `{"process":{"cmd":"/bin/touch","args":["/tmp/pwned"]}}`)
	st, b = envd(carolKey, "/process.Process/Start", "application/connect+json", start)
	expect("foreign start", st, b, 200, `"code":"not_found"`)
	st, b = envd(carolKey, "/filesystem.Filesystem/ListDir", "application/json", `{"path":"/"}`)
	expect("foreign list dir", st, b, 404, `"code":"not_found"`)
	st, b = e2bCall(t, "GET", box+"/files?path=/etc/hostname", map[string]string{"E2b-Sandbox-Id": id, "X-Access-Token": carolKey}, "")
	expect("foreign download", st, b, 404, `"code":404`)
	st, b = e2bCall(t, "GET", box+"/", map[string]string{"E2b-Sandbox-Id": id, "E2b-Sandbox-Port": "8000", "X-Access-Token": carolKey}, "")
	expect("foreign port", st, b, 404, `"code":404`)

	// Keys: the wrong shape, unknown, an ordinary Bullpen token, none.
	for name, key := range map[string]string{"short key": "e2b_123", "not hex": "e2b_" + strings.Repeat("z", 40),
		"unknown key": "e2b_" + strings.Repeat("ab", 20), "bullpen token": bobToken, "no key": ""} {
		st, b = e2bCall(t, "GET", api+"/v2/sandboxes", jsonHdr(key), "")
		expect(name, st, b, 401, `"code":401`)
		st, b = envd(key, "/process.Process/Start", "application/connect+json", start)
		expect(name+" (envd)", st, b, 200, `"code":"unauthenticated"`)
	}

	// Malformed Connect frames and bodies, with a good key.
	st, b = envd(bobKey, "/process.Process/Start", "application/connect+json", "xy")
	expect("cut envelope", st, b, 200, `{"error":{"code":"`)
	st, b = envd(bobKey, "/process.Process/Start", "application/connect+json", "garbage")
	expect("not an envelope", st, b, 200, `"code":"resource_exhausted"`)
	st, b = envd(bobKey, "/process.Process/Start", "application/connect+json", envelope(0, 1<<30, "{}"))
	expect("huge envelope", st, b, 200, `"code":"resource_exhausted"`)
	st, b = envd(bobKey, "/process.Process/Start", "application/connect+json", envelope(0, 9, `{"proc":`))
	expect("bad JSON frame", st, b, 200, `"code":"invalid_argument"`)
	st, b = envd(bobKey, "/process.Process/Start", "application/connect+json", envelope(0, 2, `{}`))
	expect("no command", st, b, 200, `"code":"invalid_argument"`)
	st, b = envd(bobKey, "/process.Process/SendInput", "application/json", `{"process":`)
	expect("bad unary JSON", st, b, 400, `"code":"invalid_argument"`)
	st, b = envd(bobKey, "/process.Process/SendSignal", "application/json", `{"process":{"pid":1},"signal":"SIGNAL_SIGSTOP"}`)
	expect("bad signal", st, b, 400, `"code":"invalid_argument"`)

	// Bad control-plane input.
	st, b = e2bCall(t, "POST", api+"/v2/sandboxes", jsonHdr(bobKey), `{"templateID":"no-such-template"}`)
	expect("unknown template", st, b, 404, `"code":404`, "no-such-template")
	st, b = e2bCall(t, "POST", api+"/v2/sandboxes", jsonHdr(bobKey), `{"templateID":`)
	expect("bad create body", st, b, 400, `"code":400`)
	st, b = e2bCall(t, "POST", api+"/v2/sandboxes", jsonHdr(bobKey), `{"templateID":"base","timeout":-5}`)
	expect("bad timeout", st, b, 400, `"code":400`)
	st, b = e2bCall(t, "POST", api+"/v2/sandboxes", jsonHdr(bobKey), `{"templateID":"base","volumeMounts":[{"name":"v","path":"/v"}]}`)
	expect("volume mounts", st, b, 400, `"code":400`, "volumeMounts")
	st, b = e2bCall(t, "GET", api+"/v2/sandboxes?state=dead", jsonHdr(bobKey), "")
	expect("bad state filter", st, b, 400, `"code":400`)

	// Nothing changed.
	if n := count(); n != before {
		t.Errorf("sandboxes: %d before, %d after", before, n)
	}
	got := nativeJSON(t, r, bobToken, "GET", "sandboxes/"+id, "", http.StatusOK)
	if got["state"] != "running" || len(got["ports"].([]any)) != 0 || got["timeout"].(float64) != 300 {
		t.Errorf("bob's sandbox changed: %v", got)
	}
	execs := nativeJSON(t, r, bobToken, "GET", "sandboxes/"+id+"/execs", "", http.StatusOK)
	if n := len(execs["items"].([]any)); n != 0 {
		t.Errorf("%d commands ran in bob's sandbox: %v", n, execs)
	}
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// startMainWithSandboxes is startMainWith for a root host, skipping
// elsewhere.
func startMainWithSandboxes(t *testing.T, args ...string) runningMain {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("sandboxes need root")
	}
	return startMainWith(t, args...)
}
