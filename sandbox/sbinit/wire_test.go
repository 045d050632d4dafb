package sbinit

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var tricky = []string{"", "plain", `quo"te\back`, "tab\tnl\ncr\r", "ctl\x00\x01\x1f\x7f", "<html>&amp;",
	"ünïcødé ✓ 😀", "\u2028\u2029", "a/b", strings.Repeat("x", 5000)}

// The codec must agree with encoding/json, which the host uses.
func TestRequestDecode(t *testing.T) {
	reqs := []Request{{Op: "ping"}, {Op: "kill"},
		{Op: "exec", Cmd: tricky, Env: []string{"PATH=/bin", "X=" + tricky[3]}, Dir: "/home/sandbox", Timeout: 1 << 40, Stdin: true},
		{Op: "exec", Cmd: []string{"echo", "hi"}, Timeout: -5}}
	for _, want := range reqs {
		b, _ := json.Marshal(want)
		var got Request
		if err := decodeRequest(b, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("decode %s: %+v, %v", b, got, err)
		}
	}
	// Hand-written JSON: whitespace, escapes, surrogates, unknown fields.
	in := ` { "op" : "exec", "extra": {"a":[1,2.5e3,null,true,"x"]}, "cmd":["\u0041\ud83d\ude00\ud800x","\/\b\f"], "stdin": false, "env": null } `
	var got Request
	if err := decodeRequest([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	var want Request
	if err := json.Unmarshal([]byte(in), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{``, `{`, `{"op":}`, `{"op":"x"`, `{"op":"x"}x`, `[]`, `{"cmd":["a",]}`, `{"timeout":1.5}`, `{"op":"\x01"}`, `{"op":"\q"}`} {
		var r Request
		if err := decodeRequest([]byte(bad), &r); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestConfigDecode(t *testing.T) {
	want := Config{Version: Version, Rootfs: "/run/x/sb_1", Hostname: "h-1", UID: 1000, GID: 1000,
		Binds: []Bind{{Src: "/usr", Dst: "/usr"}, {Src: "/etc/ssl", Dst: "/etc/ssl"}}, Seccomp: []byte{1, 2, 3, 4, 5, 6, 7, 8}, Key: "0123456789abcdef0123456789abcdef"}
	b, _ := json.Marshal(want)
	var got Config
	if err := decodeConfig(b, &got); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decode %s: %+v, %v", b, got, err)
	}
}

func TestReplyEncode(t *testing.T) {
	for _, s := range append(tricky, "bad \xff\xfe utf-8 \xe2\x82") {
		for _, r := range []Reply{{}, {Pid: 7}, {Error: s, NotFound: true}, {Exit: &Exit{Code: 137, Signal: s, TimedOut: true}}, {Exit: &Exit{}}, {Hello: s}, {Hello: "k", Pid: 3}} {
			got := r.appendJSON(nil)
			want, _ := json.Marshal(r)
			var a, b Reply
			if err := json.Unmarshal(got, &a); err != nil {
				t.Fatalf("%s: %v", got, err)
			}
			_ = json.Unmarshal(want, &b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("reply %+v: %s decodes differently from %s", r, got, want)
			}
		}
	}
}
