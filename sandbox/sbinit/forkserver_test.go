package sbinit

import (
	"slices"
	"testing"
)

func TestForkRequestRoundTrip(t *testing.T) {
	args := []string{"bullpen-sandbox-init", "sb_1"}
	env := []string{"A=1", "B=x=y", ""}
	base, a, e, err := decodeForkRequest(EncodeForkRequest(100000, args, env))
	if err != nil || base != 100000 || !slices.Equal(a, args) || !slices.Equal(e, env) {
		t.Fatalf("decoded %d %q %q %v", base, a, e, err)
	}
}

func TestForkRequestMalformed(t *testing.T) {
	for _, raw := range []string{
		"",
		"100000\x00",
		"100000\x002\x00only-one\x00",
		"100000\x001\x00unterminated",
		"-1\x001\x00init\x00",
		"x\x001\x00init\x00",
		"100000\x000\x00",
	} {
		if _, _, _, err := decodeForkRequest([]byte(raw)); err == nil {
			t.Errorf("%q: decoded without error", raw)
		}
	}
}
