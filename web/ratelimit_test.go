package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/web"
)

// clock is a settable clock for the limiter.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// from is an HTTP client whose connections come from a loopback address
// of its own (all of 127/8 is loopback on Linux), so that the server sees
// different clients.
func from(t *testing.T, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Transport: &http.Transport{DialContext: d.DialContext},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// call sends a GET of /api/v1/me with the given headers and returns the
// status, the error code and Retry-After.
func call(t *testing.T, cl *http.Client, ts *testServer, hdr map[string]string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+"/api/v1/me", nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e apiError
	if resp.StatusCode != 200 {
		raw, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatalf("error body %q: %v", raw, err)
		}
	}
	return resp.StatusCode, e.Error.Code, resp.Header.Get("Retry-After")
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

const badToken = "bp_0000000000000000000000000000000000000000"

// A burst of bad tokens from one address gets 429 with Retry-After; the
// owner of a working token at that address keeps working; other
// addresses are not limited; the attempts come back with time.
func TestFailedAuthIsRateLimited(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	ts := newServer(t, web.Config{AuthFailures: 5, AuthWindow: time.Minute, Now: clk.Now})
	attacker, other := from(t, "127.0.0.1"), from(t, "127.0.0.2")
	if st, _, _ := call(t, attacker, ts, bearer(ts.Token)); st != 200 {
		t.Fatalf("valid token before the attack = %d", st)
	}
	var fresh struct{ Token string }
	ts.do("POST", "/api/v1/tokens", ts.Token, map[string]string{"name": "never used"}, &fresh)

	for i := 0; i < 5; i++ {
		if st, code, _ := call(t, attacker, ts, bearer(badToken)); st != 401 || code != bullpen.EUNAUTHORIZED {
			t.Fatalf("bad token %d = %d %s, want 401 unauthorized", i+1, st, code)
		}
	}
	st, code, retry := call(t, attacker, ts, bearer(badToken))
	if n, _ := strconv.Atoi(retry); st != 429 || code != bullpen.ERATELIMIT || n < 1 || n > 60 {
		t.Fatalf("6th bad token = %d %s Retry-After %q, want 429 rate_limited with 1-60 s", st, code, retry)
	}
	if st, _, _ := call(t, attacker, ts, map[string]string{"Authorization": "Basic x"}); st != 429 {
		t.Errorf("malformed Authorization while limited = %d, want 429", st)
	}
	if st, _, _ := call(t, attacker, ts, bearer(ts.Token)); st != 200 {
		t.Errorf("working token from the limited address = %d, want 200", st)
	}
	// A token the server has not seen work is not looked up while the
	// address is limited: the limiter answers no guess.
	if st, _, _ := call(t, attacker, ts, bearer(fresh.Token)); st != 429 {
		t.Errorf("unseen token from the limited address = %d, want 429", st)
	}
	if st, _, _ := call(t, other, ts, bearer(badToken)); st != 401 {
		t.Errorf("bad token from another address = %d, want 401 (not limited)", st)
	}
	if st, _, _ := call(t, other, ts, bearer(fresh.Token)); st != 200 {
		t.Errorf("new token from another address = %d, want 200", st)
	}
	clk.Add(12 * time.Second) // 5 per minute: one attempt back
	if st, _, _ := call(t, attacker, ts, bearer(badToken)); st != 401 {
		t.Errorf("bad token after 12 s = %d, want 401 (one attempt back)", st)
	}
	if st, _, _ := call(t, attacker, ts, bearer(badToken)); st != 429 {
		t.Errorf("bad token right after = %d, want 429 again", st)
	}
}

// Parallel guesses cannot overshoot the limit: each takes its attempt
// before its lookup.
func TestParallelFailuresDoNotOvershoot(t *testing.T) {
	ts := newServer(t, web.Config{AuthFailures: 5})
	got := burst(from(t, "127.0.0.7"), ts.URL, badToken, 40)
	if got[401] != 5 || got[429] != 35 {
		t.Errorf("40 parallel bad tokens with 5 attempts: statuses %v, want 5×401 and 35×429", got)
	}
}

// burst sends n GETs of /api/v1/me with the bearer token at once and
// counts their statuses (-1: a transport error).
func burst(cl *http.Client, base, token string, n int) map[int]int {
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			st := -1
			req, _ := http.NewRequest("GET", base+"/api/v1/me", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			if resp, err := cl.Do(req); err == nil {
				st = resp.StatusCode
				resp.Body.Close()
			}
			mu.Lock()
			got[st]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return got
}

// Bad session cookies and bad login tokens count too; a working session
// survives its address being limited.
func TestFailedCookiesAndLoginsAreRateLimited(t *testing.T) {
	ts := newServer(t, web.Config{AuthFailures: 3})
	b := ts.login(ts.Token) // from 127.0.0.1, before the attack
	cl := from(t, "127.0.0.1")
	cookie := map[string]string{"Cookie": "bullpen_session=forged"}
	for i := 0; i < 3; i++ {
		if st, _, _ := call(t, cl, ts, cookie); st != 401 {
			t.Fatalf("bad cookie %d = %d, want 401", i+1, st)
		}
	}
	if st, code, retry := call(t, cl, ts, cookie); st != 429 || code != bullpen.ERATELIMIT || retry == "" {
		t.Fatalf("4th bad cookie = %d %s %q, want 429 with Retry-After", st, code, retry)
	}
	var me bullpen.Member
	if st := b.do("GET", "/api/v1/me", nil, &me); st != 200 || me.Handle != "admin" {
		t.Errorf("logged-in browser on the limited address = %d %q, want 200 admin", st, me.Handle)
	}

	lg := from(t, "127.0.0.3")
	for i := 0; i < 4; i++ {
		st, retry := postLogin(t, lg, ts, "bp_wrong")
		want := 401
		if i == 3 {
			want = 429
		}
		if st != want || (want == 429) != (retry != "") {
			t.Fatalf("login %d with a bad token = %d Retry-After %q, want %d", i+1, st, retry, want)
		}
	}
	if st, _ := postLogin(t, from(t, "127.0.0.4"), ts, ts.Token); st != http.StatusSeeOther {
		t.Errorf("login from another address = %d, want 303", st)
	}
}

func postLogin(t *testing.T, cl *http.Client, ts *testServer, token string) (int, string) {
	t.Helper()
	resp, err := cl.Get(ts.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := loginCSRF.FindSubmatch(page)
	if m == nil {
		t.Fatalf("no _csrf in the login page")
	}
	resp, err = cl.PostForm(ts.URL+"/login", url.Values{"token": {token}, "_csrf": {string(m[1])}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// X-Forwarded-For is believed only from a trusted proxy: without one, a
// client that sends a new header each time is still counted by its
// connection; behind one, each forwarded client counts alone.
func TestRateLimitAndProxies(t *testing.T) {
	plain := newServer(t, web.Config{AuthFailures: 2})
	cl := from(t, "127.0.0.5")
	statuses := []int{}
	for i := 0; i < 3; i++ {
		h := bearer(badToken)
		h["X-Forwarded-For"] = "10.0.0." + strconv.Itoa(i+1)
		st, _, _ := call(t, cl, plain, h)
		statuses = append(statuses, st)
	}
	if statuses[2] != 429 {
		t.Errorf("rotating X-Forwarded-For without a trusted proxy = %v, want the 3rd limited", statuses)
	}

	proxied := newServer(t, web.Config{AuthFailures: 2, TrustedProxies: []string{"127.0.0.6"}})
	px := from(t, "127.0.0.6")
	xff := func(chain string) map[string]string {
		h := bearer(badToken)
		h["X-Forwarded-For"] = chain
		return h
	}
	for i := 0; i < 2; i++ {
		// The client spoofs a first hop; the proxy appends the real one.
		call(t, px, proxied, xff("6.6.6."+strconv.Itoa(i)+", 192.0.2.7"))
	}
	if st, _, _ := call(t, px, proxied, xff("192.0.2.7")); st != 429 {
		t.Errorf("3rd failure of 192.0.2.7 behind the proxy = %d, want 429", st)
	}
	if st, _, _ := call(t, px, proxied, xff("192.0.2.8")); st != 401 {
		t.Errorf("another client behind the proxy = %d, want 401 (not limited)", st)
	}
}

// A burst of parallel requests with a working token the server has not
// seen yet (a client's first burst) spends one attempt, not one per
// request: none is refused as a failed attempt, since none failed.
func TestParallelFirstUseOfAGoodTokenIsNotLimited(t *testing.T) {
	db, off, token := openOffice(t, store.SQLite)
	// Each lookup takes a while, as on a busy server, so the burst's
	// requests are all in flight together.
	ts := serve(t, db, off, token, web.Config{AuthFailures: 5}, web.Services{Office: slowAuth{off}})
	var fresh struct{ Token string }
	ts.do("POST", "/api/v1/tokens", ts.Token, map[string]string{"name": "burst"}, &fresh)
	const n = 100
	cl := from(t, "127.0.0.8")
	cl.Transport.(*http.Transport).MaxIdleConnsPerHost = n // a connection each, as a burst of clients
	got := burst(cl, ts.URL, fresh.Token, n)
	if got[200] != n {
		t.Errorf("%d parallel first uses of a good token with 5 attempts: statuses %v, want all 200", n, got)
	}
	// The burst spent nothing: bad guesses still get their 5 attempts.
	for i := 0; i < 5; i++ {
		if st, _, _ := call(t, cl, ts, bearer(badToken)); st != 401 {
			t.Fatalf("bad token %d after the burst = %d, want 401", i+1, st)
		}
	}
	if st, _, _ := call(t, cl, ts, bearer(badToken)); st != 429 {
		t.Errorf("6th bad token = %d, want 429", st)
	}
}

// slowAuth is an office whose token lookups take 50 ms.
type slowAuth struct{ web.Office }

func (o slowAuth) Authenticate(ctx context.Context, token string) (bullpen.Member, error) {
	time.Sleep(50 * time.Millisecond)
	return o.Office.Authenticate(ctx, token)
}
