package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/fds"
)

// flood runs inside an agent's sandbox: it opens total connections to the
// bridge (127.0.0.1:4100) in bursts, sends a request on each, keeps a few
// of each burst open (up to hold), prints "HELD n", waits 3 s with them
// open, closes them and prints what it did as JSON.
const flood = `
import json, resource, socket, sys, time
total, burst, keep, hold = map(int, sys.argv[1:5])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
req = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
held, opened, failed = [], 0, 0
while opened + failed < total:
    conns = []
    for _ in range(min(burst, total - opened - failed)):
        try:
            s = socket.create_connection(("127.0.0.1", 4100), timeout=10)
        except OSError:
            failed += 1
            continue
        opened += 1
        try:
            s.send(req)
        except OSError:
            pass
        conns.append(s)
    for i, s in enumerate(conns):
        if i < keep and len(held) < hold:
            held.append(s)
        else:
            s.close()
print("HELD %d" % len(held), flush=True)
time.sleep(3)
for s in held:
    s.close()
print(json.dumps({"opened": opened, "failed": failed, "held": len(held)}), flush=True)
`

// TestSocketFlood floods an agent's socket from inside its sandbox with
// 10,000 connections in bursts of 200, 500 of them held open for a
// while. The server's descriptors stay bounded while they are held, come
// back to within 100 of the start afterwards, and another member's API
// calls keep answering throughout (their p99 is logged).
func TestSocketFlood(t *testing.T) {
	o := newSocketOffice(t)
	a, _ := o.hireBuiltin("alpha")
	lines, wait := o.runInside(a, "print('ready')") // the workspace, its bridge and the socket exist
	for range lines {
	}
	if stderr, code := wait(); code != 0 {
		t.Fatalf("warm-up exited %d: %s", code, stderr)
	}
	start := openFDs(t)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var lat []time.Duration
	var bad []string
	var peak int
	wg.Add(2)
	go func() { // another member reads the office all along
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			d, st := timedGet(o.m.URL()+"api/v1/channels", o.api.token)
			lat = append(lat, d)
			if st != http.StatusOK {
				bad = append(bad, strconv.Itoa(st))
			}
		}
	}()
	go func() { // the server's descriptors, sampled
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if u, err := fds.Count(); err == nil {
				peak = max(peak, u.Open)
			}
		}
	}()

	began := time.Now()
	lines, wait = o.runInside(a, flood, "10000", "200", "10", "500")
	var whileHeld int
	var report struct{ Opened, Failed, Held int }
	for line := range lines {
		if strings.HasPrefix(line, "HELD ") {
			time.Sleep(time.Second) // the flood's last connections settle
			whileHeld = openFDs(t)
			continue
		}
		if err := json.Unmarshal([]byte(line), &report); err != nil {
			t.Errorf("flood printed %q", line)
		}
	}
	stderr, code := wait()
	took := time.Since(began)
	var after int
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if after = openFDs(t); after <= start+100 || time.Now().After(deadline) {
			break
		}
	}
	close(stop)
	wg.Wait()
	if code != 0 {
		t.Fatalf("flood exited %d: %s", code, stderr)
	}
	slices.Sort(lat)
	p99 := lat[len(lat)*99/100]
	t.Logf("flood: %d connections opened (%d failed, %d held) in %s; server descriptors %d at start, %d while %d were held, peak %d, %d after",
		report.Opened, report.Failed, report.Held, took.Round(time.Millisecond), start, whileHeld, report.Held, peak, after)
	t.Logf("another member's API calls during the flood: %d, p50 %s, p99 %s, max %s",
		len(lat), lat[len(lat)/2].Round(time.Microsecond), p99.Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	if report.Opened+report.Failed != 10000 || report.Held != 500 {
		t.Errorf("flood report %+v, want 10000 connections tried, 500 held", report)
	}
	if whileHeld > start+400 {
		t.Errorf("server descriptors while the sandbox held %d connections: %d, started at %d (want at most %d)", report.Held, whileHeld, start, start+400)
	}
	if after > start+100 {
		t.Errorf("server descriptors after the flood: %d, started at %d (want at most %d)", after, start, start+100)
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d API calls of another member failed during the flood: %v", len(bad), len(lat), bad[:min(len(bad), 10)])
	}
	if p99 > time.Second { // the target is 100 ms; a shared machine gets slack
		t.Errorf("p99 of another member's API calls during the flood = %s", p99)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	u, err := fds.Count()
	if err != nil {
		t.Fatal(err)
	}
	return u.Open
}

// timedGet GETs url with token and returns how long it took and its status
// (0 when it failed).
func timedGet(url, token string) (time.Duration, int) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return time.Since(t0), 0
	}
	resp.Body.Close()
	return time.Since(t0), resp.StatusCode
}
