package web

import (
	"net"
	"testing"
	"time"
)

func TestClientAddress(t *testing.T) {
	trusted, err := parseProxies([]string{"10.0.0.0/8", "127.0.0.1", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		p      proxies
		remote string
		xff    string
		want   string
	}{
		{"no proxies: header ignored", nil, "203.0.113.9", "1.2.3.4", "203.0.113.9"},
		{"untrusted remote: header ignored", trusted, "203.0.113.9", "1.2.3.4", "203.0.113.9"},
		{"trusted proxy", trusted, "127.0.0.1", "1.2.3.4", "1.2.3.4"},
		{"spoofed first hop", trusted, "127.0.0.1", "6.6.6.6, 1.2.3.4", "1.2.3.4"},
		{"proxy chain", trusted, "127.0.0.1", "1.2.3.4, 10.1.1.1, 10.2.2.2", "1.2.3.4"},
		{"garbled hop", trusted, "127.0.0.1", "1.2.3.4, junk", "127.0.0.1"},
		{"only proxies", trusted, "127.0.0.1", "10.0.0.1", "10.0.0.1"},
		{"IPv6 by /64", nil, "2001:db8:1:2:aaaa::1", "", "2001:db8:1:2::/64"},
		{"IPv6 same /64", trusted, "::1", "2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"},
	}
	for _, tt := range tests {
		if got := tt.p.client(net.ParseIP(tt.remote), tt.xff); got != tt.want {
			t.Errorf("%s: client(%s, %q) = %q, want %q", tt.name, tt.remote, tt.xff, got, tt.want)
		}
	}
	if _, err := parseProxies([]string{"not-an-ip"}); err == nil {
		t.Error("parseProxies(not-an-ip) = nil error")
	}
}

// The limiter forgets addresses rather than grow without bound.
func TestFailLimiterIsBounded(t *testing.T) {
	now := time.Unix(0, 0)
	l := newFailLimiter(3, time.Minute, func() time.Time { return now })
	for i := 0; i < maxLimitKeys+10; i++ {
		l.fail(net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)).String())
	}
	if n := len(l.bucket); n > maxLimitKeys {
		t.Errorf("limiter tracks %d addresses, want at most %d", n, maxLimitKeys)
	}
	for i := 0; i < 3; i++ {
		if ok, _ := l.take("x"); !ok {
			t.Fatalf("take %d of 3 = false", i+1)
		}
	}
	if ok, wait := l.take("x"); ok || wait != 20*time.Second {
		t.Errorf("4th take of 3 = %v, wait %v; want false, 20s (3 a minute)", ok, wait)
	}
	l.refund("x")
	if ok, _ := l.take("x"); !ok {
		t.Error("take after a refund = false, want true")
	}
}
