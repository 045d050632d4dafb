package e2b

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// The list filters read what the SDK sends: metadata URL-encoded twice
// over, states comma-separated; bad values are refused.
func TestParseList(t *testing.T) {
	// The SDK encodes each key and value, joins them as a query string,
	// and that whole string is one query parameter.
	inner := url.Values{url.QueryEscape("a b"): {url.QueryEscape("x&y")}, "k": {"v"}}.Encode()
	q := url.Values{"metadata": {inner}, "state": {"running,paused"}, "limit": {"5"}, "nextToken": {"5"}}
	lq, err := parseList(q)
	if err != nil {
		t.Fatal(err)
	}
	if lq.metadata["a b"] != "x&y" || lq.metadata["k"] != "v" || len(lq.metadata) != 2 || !lq.states["running"] || !lq.states["paused"] ||
		lq.limit != 5 || lq.offset != 5 {
		t.Fatalf("parseList = %+v", lq)
	}
	if lq, _ := parseList(url.Values{}); !lq.states["running"] || !lq.states["paused"] {
		t.Errorf("default states = %v", lq.states)
	}
	for _, bad := range []url.Values{{"state": {"dead"}}, {"limit": {"0"}}, {"limit": {"x"}}, {"nextToken": {"-1"}}, {"metadata": {"%zz"}}} {
		if _, err := parseList(bad); !bullpen.IsCode(err, bullpen.EINVALID) {
			t.Errorf("parseList(%v) = %v, want invalid", bad, err)
		}
	}
}

// A create maps onto a sandbox spec: base is the host-tools image,
// timeouts are seconds, internet access opens egress; what Bullpen cannot
// honour is refused.
func TestCreateSpec(t *testing.T) {
	yes, secs := true, int64(90)
	sp, err := createIn{TemplateID: "base", Timeout: &secs, Metadata: map[string]string{"k": "v"}, EnvVars: map[string]string{"A": "1"},
		AllowInternetAccess: &yes}.spec(5 * time.Minute)
	if err != nil || sp.Image != "host" || sp.Timeout != 90*time.Second || sp.Tags["k"] != "v" || sp.Env["A"] != "1" ||
		len(sp.Network.Allow) != 1 || sp.Network.Allow[0] != "0.0.0.0/0" {
		t.Fatalf("spec = %+v, %v", sp, err)
	}
	if sp, _ := (createIn{}).spec(5 * time.Minute); sp.Image != "host" || sp.Timeout != 5*time.Minute || len(sp.Network.Allow) != 0 {
		t.Errorf("default spec = %+v", sp)
	}
	if sp, _ := (createIn{TemplateID: "alice/tools"}).spec(time.Minute); sp.Image != "alice/tools" {
		t.Errorf("template = %q", sp.Image)
	}
	neg, huge := int64(-1), int64(1<<40)
	for name, in := range map[string]createIn{
		"negative timeout": {Timeout: &neg}, "huge timeout": {Timeout: &huge}, "host": {TemplateID: "host"},
		"mcp": {MCP: json.RawMessage(`{"x":1}`)}, "volumes": {VolumeMounts: json.RawMessage(`[{"name":"v"}]`)},
		"network": {Network: json.RawMessage(`{"allowOut":["1.1.1.1"]}`)}, "auto pause": {AutoPause: &yes},
	} {
		if _, err := in.spec(time.Minute); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A watch reports what changed between two listings, names relative to
// the watched directory.
func TestWatchDiff(t *testing.T) {
	t0 := time.Unix(100, 0)
	prev := map[string]sandbox.FileInfo{
		"/w/kept":    {Path: "/w/kept", Size: 1, ModTime: t0},
		"/w/changed": {Path: "/w/changed", Size: 1, ModTime: t0},
		"/w/gone":    {Path: "/w/gone", Size: 1, ModTime: t0},
		"/w/d":       {Path: "/w/d", IsDir: true, ModTime: t0},
	}
	cur := map[string]sandbox.FileInfo{
		"/w/kept":    {Path: "/w/kept", Size: 1, ModTime: t0},
		"/w/changed": {Path: "/w/changed", Size: 2, ModTime: t0.Add(time.Second)},
		"/w/d":       {Path: "/w/d", IsDir: true, ModTime: t0.Add(time.Second)},
		"/w/d/new":   {Path: "/w/d/new", Size: 0, ModTime: t0},
	}
	var got []string
	for _, ev := range diff("/w", prev, cur, false) {
		b, _ := json.Marshal(ev.Type)
		got = append(got, strings.Trim(string(b), `"`)+":"+ev.Name)
	}
	want := "EVENT_TYPE_WRITE:changed EVENT_TYPE_CREATE:d/new EVENT_TYPE_REMOVE:gone"
	if strings.Join(got, " ") != want {
		t.Fatalf("diff = %v, want %s", got, want)
	}
}

// Signals come by name or number; others are refused.
func TestSignalJSON(t *testing.T) {
	for in, want := range map[string]signal{`"SIGNAL_SIGTERM"`: sigTERM, `"SIGNAL_SIGKILL"`: sigKILL, `9`: sigKILL, `15`: sigTERM} {
		var s signal
		if err := json.Unmarshal([]byte(in), &s); err != nil || s != want {
			t.Errorf("%s = %v, %v", in, s, err)
		}
	}
	var s signal
	if err := json.Unmarshal([]byte(`"SIGNAL_SIGSTOP"`), &s); err == nil {
		t.Error("SIGSTOP accepted")
	}
}

// Input goes in order until stdin is closed; after that, and for a
// process started without stdin, it is refused.
func TestProcInput(t *testing.T) {
	p := &proc{input: make(chan []byte, 2)}
	if err := p.send([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := p.send([]byte("b")); err != nil {
		t.Fatal(err)
	}
	if err := p.send([]byte("c")); !bullpen.IsCode(err, bullpen.ERATELIMIT) {
		t.Errorf("a full queue: %v", err)
	}
	if err := p.closeStdin(); err != nil {
		t.Fatal(err)
	}
	if err := p.send([]byte("d")); !bullpen.IsCode(err, bullpen.ECONFLICT) {
		t.Errorf("after close: %v", err)
	}
	if got := string(<-p.input) + string(<-p.input); got != "ab" {
		t.Errorf("input = %q", got)
	}
	if err := (&proc{}).send([]byte("x")); !bullpen.IsCode(err, bullpen.ECONFLICT) {
		t.Errorf("no stdin: %v", err)
	}
}
