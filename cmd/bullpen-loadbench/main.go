// Command bullpen-loadbench measures the office end to end on SQLite or
// PostgreSQL (-db): it starts the real server on a loopback port with a
// fresh database, connects websocket clients, posts messages over the REST API
// at a fixed rate, and prints the sustained rate and the post→delivery
// latency seen by every client.
//
//	go run ./cmd/bullpen-loadbench -clients 100 -rate 2000 -duration 10s
//	go run ./cmd/bullpen-loadbench -db postgres   # server: BULLPEN_BENCH_POSTGRES_URL
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/gorilla/websocket"
)

func main() {
	clients := flag.Int("clients", 100, "websocket clients")
	rate := flag.Int("rate", 2000, "messages posted per second")
	duration := flag.Duration("duration", 10*time.Second, "how long to post")
	posters := flag.Int("posters", 16, "concurrent HTTP posters")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	dbKind := flag.String("db", "sqlite", "database: sqlite, or postgres (a fresh database on BULLPEN_BENCH_POSTGRES_URL's server)")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if err := run(*dbKind, *clients, *rate, *posters, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(dbKind string, clients, rate, posters int, duration time.Duration) error {
	ctx := context.Background()
	db, cleanup, err := openDB(ctx, dbKind)
	if err != nil {
		return err
	}
	defer cleanup()
	off, err := office.New(ctx, db, office.Config{})
	if err != nil {
		return err
	}
	token, err := off.Bootstrap(ctx, "admin")
	if err != nil {
		return err
	}
	srv := web.New(web.Config{}, web.Services{Office: off})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	base := "http://" + ln.Addr().String()

	total := int(float64(rate) * duration.Seconds())
	lat := newLatencies(clients * total)
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/api/v1/ws",
			http.Header{"Authorization": {"Bearer " + token}})
		if err != nil {
			return fmt.Errorf("dial client %d: %w", i, err)
		}
		wg.Add(1)
		go receive(conn, total, lat, &wg)
	}

	start := time.Now()
	var posted, failed atomic.Int64
	ticks := make(chan struct{}, total)
	var pw sync.WaitGroup
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: posters}}
	for p := 0; p < posters; p++ {
		pw.Add(1)
		go func() {
			defer pw.Done()
			for range ticks {
				if post(httpc, base, token) != nil {
					failed.Add(1)
				}
				posted.Add(1)
			}
		}()
	}
	interval := time.Second / time.Duration(rate)
	for i := 0; i < total; i++ {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		ticks <- struct{}{}
	}
	close(ticks)
	pw.Wait()
	postedIn := time.Since(start)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		return fmt.Errorf("clients did not receive every message within 60 s")
	}
	deliveredIn := time.Since(start)
	if failed.Load() > 0 {
		return fmt.Errorf("%d posts failed", failed.Load())
	}
	p50, p99, max := lat.percentiles()
	fmt.Printf("db=%s clients=%d posted=%d target_rate=%d/s\n", dbKind, clients, total, rate)
	fmt.Printf("sustained: %.0f messages/s posted, %.0f messages/s delivered to all %d clients (%d deliveries)\n",
		float64(total)/postedIn.Seconds(), float64(total)/deliveredIn.Seconds(), clients, lat.n.Load())
	fmt.Printf("post->delivery latency: p50=%.2fms p99=%.2fms max=%.2fms\n", ms(p50), ms(p99), ms(max))
	return nil
}

// post sends one message whose body carries its send time.
func post(c *http.Client, base, token string) error {
	body := fmt.Sprintf(`{"body":"t=%d"}`, time.Now().UnixNano())
	req, _ := http.NewRequest("POST", base+"/api/v1/channels/1/messages", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// receive reads frames until n messages have arrived. It scans the raw
// frame for the send times instead of decoding it, so that the measuring
// clients, which share the server's two cores, cost as little as possible.
func receive(conn *websocket.Conn, n int, lat *latencies, wg *sync.WaitGroup) {
	defer wg.Done()
	defer conn.Close()
	marker := []byte(`"body":"t=`)
	for got := 0; got < n; {
		_, data, err := conn.ReadMessage()
		if err != nil {
			return
		}
		now := time.Now().UnixNano()
		for {
			i := bytes.Index(data, marker)
			if i < 0 {
				break
			}
			data = data[i+len(marker):]
			end := bytes.IndexByte(data, '"')
			sent, _ := strconv.ParseInt(string(data[:end]), 10, 64)
			lat.add(time.Duration(now - sent))
			got++
		}
	}
}

type latencies struct {
	mu sync.Mutex
	d  []time.Duration
	n  atomic.Int64
}

func newLatencies(capacity int) *latencies { return &latencies{d: make([]time.Duration, 0, capacity)} }

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
	l.n.Add(1)
}

func (l *latencies) percentiles() (p50, p99, max time.Duration) {
	sort.Slice(l.d, func(i, j int) bool { return l.d[i] < l.d[j] })
	if len(l.d) == 0 {
		return 0, 0, 0
	}
	at := func(q float64) time.Duration { return l.d[int(q*float64(len(l.d)-1))] }
	return at(0.5), at(0.99), l.d[len(l.d)-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
