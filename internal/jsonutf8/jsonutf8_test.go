package jsonutf8

import (
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

func TestCheckUTF8(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string // "" for accepted, else the start of the message
	}{
		{"plain", `{"body":"hello"}`, ""},
		{"unicode", `{"body":"héllo ✓ 👩‍💻"}`, ""},
		{"escaped pair", `{"body":"\ud83d\ude00"}`, ""},
		{"escaped pair, upper case", `{"body":"\uD83D\uDE00"}`, ""},
		{"upper-case lone high", `{"body":"\uDBFF!"}`, "body: invalid UTF-8"},
		{"escaped backslash u", `{"body":"\\u00e9 and \\ud800"}`, ""},
		{"bad byte", "{\"body\":\"a\xffb\"}", "body: invalid UTF-8"},
		{"truncated sequence", "{\"body\":\"\xe2\x82\"}", "body: invalid UTF-8"},
		{"overlong", "{\"body\":\"\xc0\xaf\"}", "body: invalid UTF-8"},
		{"encoded surrogate", "{\"body\":\"\xed\xa0\x80\"}", "body: invalid UTF-8"},
		{"lone high escape", `{"body":"x\ud800y"}`, "body: invalid UTF-8"},
		{"high then non-low", `{"body":"\ud800\u0041"}`, "body: invalid UTF-8"},
		{"lone low escape", `{"body":"\udc00"}`, "body: invalid UTF-8"},
		{"high at end", `{"body":"\ud800"}`, "body: invalid UTF-8"},
		{"nested", "{\"spec\":{\"env\":{\"HOME\":\"ok\",\"X\":\"\xfe\"}}}", "spec.env.X: invalid UTF-8"},
		{"array", "{\"argv\":[\"ls\",1,{\"a\":[]},\"\xff\"]}", "argv[3]: invalid UTF-8"},
		{"odd key", "{\"env\":{\"A B\":\"\xff\"}}", `env["A B"]: invalid UTF-8`},
		{"after nested", "{\"a\":{\"b\":[1,2]},\"c\":\"\xff\"}", "c: invalid UTF-8"},
		{"bad key", "{\"env\":{\"\xff\":\"v\"}}", "env: a key is not valid UTF-8"},
		{"bad top key", "{\"\xff\":1}", "the request body: a key is not valid UTF-8"},
		{"syntax error first", "{\"a\":,\"b\":\"\xff\"}", ""}, // the decoder reports the syntax
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check([]byte(tt.body))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check(%q) = %v, want nil", tt.body, err)
			case tt.want != "" && (!bullpen.IsCode(err, bullpen.EINVALID) || !strings.HasPrefix(bullpen.ErrorMessage(err), tt.want)):
				t.Errorf("Check(%q) = %v, want invalid %q", tt.body, err, tt.want)
			}
		})
	}
}

// BenchmarkCheckUTF8 measures the scan on a 64 KiB message body: "plain"
// takes the fast path (valid bytes, no \u escape), "escapes" walks every
// token.
func BenchmarkCheckUTF8(b *testing.B) {
	for _, bc := range []struct{ name, unit string }{{"plain", "café ✓ "}, {"escapes", `caf\u00e9 ✓ `}} {
		body := []byte(`{"body":"` + strings.Repeat(bc.unit, (64<<10)/len(bc.unit)) + `","thread_id":1}`)
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := Check(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
