package web

import (
	"crypto/sha256"
	"math"
	"net"
	"strings"
	"sync"
	"time"
)

// Defaults of the failed-authentication limit.
const (
	defaultAuthFailures = 10
	defaultAuthWindow   = time.Minute
	// maxLimitKeys bounds the addresses tracked; past it, addresses that
	// have all their attempts back are forgotten first.
	maxLimitKeys = 1 << 16
	// maxKnownCreds bounds the credentials remembered as recently valid.
	maxKnownCreds = 1 << 12
	knownCredTTL  = 24 * time.Hour
)

// setupAuthLimit applies the limit's defaults. A bad TrustedProxies entry
// is logged and no proxy is trusted: counting the proxy's address is the
// safe side.
func (s *Server) setupAuthLimit() {
	cfg := &s.cfg
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.AuthFailures == 0 {
		cfg.AuthFailures = defaultAuthFailures
	}
	if cfg.AuthWindow <= 0 {
		cfg.AuthWindow = defaultAuthWindow
	}
	if cfg.AuthFailures > 0 {
		s.fails = newFailLimiter(cfg.AuthFailures, cfg.AuthWindow, cfg.Now)
	}
	s.known = &knownCreds{now: cfg.Now, seen: map[[32]byte]time.Time{}}
	p, err := parseProxies(cfg.TrustedProxies)
	if err != nil {
		s.log.Error("web: trusted proxies: no proxy is trusted", "err", err)
	}
	s.proxies = p
}

// failLimiter counts failed authentications per client address in token
// buckets: each address has burst attempts, refilled evenly over window.
// An address with less than one attempt left is limited.
type failLimiter struct {
	burst  float64
	rate   float64 // attempts regained per second
	now    func() time.Time
	mu     sync.Mutex
	bucket map[string]*bucket
}

type bucket struct {
	left float64
	at   time.Time
}

func newFailLimiter(burst int, window time.Duration, now func() time.Time) *failLimiter {
	return &failLimiter{burst: float64(burst), rate: float64(burst) / window.Seconds(), now: now, bucket: map[string]*bucket{}}
}

// refill brings b up to date and returns the attempts it has left.
func (l *failLimiter) refill(b *bucket, now time.Time) float64 {
	b.left = math.Min(l.burst, b.left+now.Sub(b.at).Seconds()*l.rate)
	b.at = now
	return b.left
}

// take takes an attempt from key if it has one; if not, it says how long
// until it does.
func (l *failLimiter) take(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.get(key)
	if left := l.refill(b, l.now()); left < 1 {
		return false, time.Duration((1 - left) / l.rate * float64(time.Second))
	}
	b.left--
	return true, 0
}

// refund gives back an attempt that take took and that did not fail.
func (l *failLimiter) refund(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.get(key)
	b.left = math.Min(l.burst, l.refill(b, l.now())+1)
}

// fail takes an attempt from key, if it has one left.
func (l *failLimiter) fail(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.get(key)
	b.left = math.Max(0, l.refill(b, l.now())-1)
}

// get returns key's bucket, making a full one; l.mu is held.
func (l *failLimiter) get(key string) *bucket {
	b := l.bucket[key]
	if b == nil {
		now := l.now()
		if len(l.bucket) >= maxLimitKeys {
			l.prune(now)
		}
		b = &bucket{left: l.burst, at: now}
		l.bucket[key] = b
	}
	return b
}

// prune forgets addresses whose buckets are full again, and if that is
// not enough, half of the rest: forgetting an attacker early is better
// than growing without bound.
func (l *failLimiter) prune(now time.Time) {
	for k, b := range l.bucket {
		if l.refill(b, now) >= l.burst {
			delete(l.bucket, k)
		}
	}
	for k := range l.bucket {
		if len(l.bucket) < maxLimitKeys/2 {
			break
		}
		delete(l.bucket, k)
	}
}

// knownCreds remembers hashes of credentials that authenticated recently.
// They skip the limiter (they are still checked against the database), so
// the owner of a working token or session keeps working while its address
// is limited; a limited guesser gets no answer about its guesses.
type knownCreds struct {
	now  func() time.Time
	mu   sync.Mutex
	seen map[[32]byte]time.Time
}

func (k *knownCreds) add(secret string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	if len(k.seen) >= maxKnownCreds {
		for h, at := range k.seen {
			if now.Sub(at) > knownCredTTL || len(k.seen) >= maxKnownCreds {
				delete(k.seen, h)
			}
		}
	}
	k.seen[sha256.Sum256([]byte(secret))] = now
}

func (k *knownCreds) has(secret string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	at, ok := k.seen[sha256.Sum256([]byte(secret))]
	return ok && k.now().Sub(at) <= knownCredTTL
}

// proxies is the set of networks whose X-Forwarded-For is believed.
type proxies []*net.IPNet

// parseProxies parses IPs and CIDRs; a bad entry is an error.
func parseProxies(list []string) (proxies, error) {
	var out proxies
	for _, s := range list {
		s = strings.TrimSpace(s)
		if !strings.Contains(s, "/") {
			if ip := net.ParseIP(s); ip != nil && ip.To4() != nil {
				s += "/32"
			} else {
				s += "/128"
			}
		}
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func (p proxies) trusts(ip net.IP) bool {
	for _, n := range p {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// client returns the address a request is counted under: the connection's,
// or, when the connection comes from a trusted proxy, the nearest address
// in X-Forwarded-For that is not itself a trusted proxy. IPv6 addresses
// count by their /64, which one host usually has whole.
func (p proxies) client(remote net.IP, forwardedFor string) string {
	ip := p.clientIP(remote, forwardedFor)
	if ip.To4() == nil && len(ip) == net.IPv6len {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ip.String()
}

// clientIP returns the client's address: the connection's, or the nearest
// address in X-Forwarded-For that is not a trusted proxy.
func (p proxies) clientIP(remote net.IP, forwardedFor string) net.IP {
	ip := remote
	if len(p) > 0 && p.trusts(ip) && forwardedFor != "" {
		hops := strings.Split(forwardedFor, ",")
		for i := len(hops) - 1; i >= 0; i-- {
			hop := net.ParseIP(strings.TrimSpace(hops[i]))
			if hop == nil {
				break // a garbled header: stay with the last good hop
			}
			ip = hop
			if !p.trusts(hop) {
				break
			}
		}
	}
	return ip
}
