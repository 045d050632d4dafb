// Command load (bench/load) measures the office end to end on SQLite or
// PostgreSQL (-db): it starts the real server on a loopback port with a
// fresh database, connects websocket clients, posts messages over the REST API
// at a fixed rate, and prints the sustained rate and the post→delivery
// latency seen by every client. With -runs N it repeats that on fresh
// databases and prints, besides each run, one set of figure lines for
// the call: the lowest rate, the highest p99 and the median p50.
//
// CPU per message is the process's, server and the bench's clients
// together, and the server's part of it: a CPU profile over the measured
// window, whose samples the bench's goroutines label bench=client
// (cpusplit.go), divides it.
//
//	go run ./bench/load -clients 100 -rate 2000 -duration 10s -runs 3
//	go run ./bench/load -db postgres -rate 1000   # server: BULLPEN_BENCH_POSTGRES_URL
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
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/google/pprof/profile"
	"github.com/gorilla/websocket"
)

func main() {
	clients := flag.Int("clients", 100, "websocket clients")
	rate := flag.Int("rate", 2000, "messages posted per second")
	duration := flag.Duration("duration", 10*time.Second, "how long to post")
	posters := flag.Int("posters", 16, "concurrent HTTP posters")
	frameInterval := flag.Duration("frame-interval", 0, "least time between two websocket frames to a busy client (0: the server's default)")
	frameBudget := flag.Int("frame-budget", 0, "frames per second to all websocket clients together (0: the server's default; negative: no bound)")
	runs := flag.Int("runs", 1, "runs, each on a fresh database; the figures are the worst rate and p99, the median p50")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the runs' measured windows to this file (the bench's clients carry the label bench=client: go tool pprof -tagignore bench=client shows the server alone)")
	dbKind := flag.String("db", "sqlite", "database: sqlite, or postgres (a fresh database on BULLPEN_BENCH_POSTGRES_URL's server)")
	figures := flag.String("figures", "", "prefix of the figure keys (default office_<db>)")
	flag.Parse()
	if *figures == "" {
		*figures = "office_" + *dbKind
	}
	cfg := config{db: *dbKind, clients: *clients, rate: *rate, posters: *posters, duration: *duration, frameInterval: *frameInterval, frameBudget: *frameBudget}
	var results []result
	for i := 0; i < max(1, *runs); i++ {
		r, err := run(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		fmt.Printf("run %d: ", i+1)
		r.print(cfg)
		results = append(results, r)
	}
	printFigures(*figures, results)
	if *cpuProfile != "" {
		if err := writeProfile(*cpuProfile, results); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
	}
}

// config is one call's settings.
type config struct {
	db                     string
	clients, rate, posters int
	duration               time.Duration
	frameInterval          time.Duration
	frameBudget            int
}

// result is what one run measured.
type result struct {
	posted, delivered float64 // messages/s: posted by all, and delivered to every client
	p50, p99, max     time.Duration
	deliveries        int64
	postP50, postP99  time.Duration    // a post's round trip: with -posters it bounds the rate
	frames, bytes     int64            // websocket frames and their bytes, all clients together
	framesPerSec      float64          // frames per client per second of the run
	statements        float64          // SQL statements per post, BEGIN/COMMIT not counted
	perCommit         float64          // posts per committed transaction
	cpuPerMsg         time.Duration    // CPU time of the process (server and clients) per message
	serverCPUPerMsg   time.Duration    // the server's part of cpuPerMsg: its share of the profile's samples
	serverShare       float64          // the server's share of the profile's samples, 0 to 1
	profile           *profile.Profile // the measured window's CPU profile
	idlePerClient     float64          // KiB of heap and stacks per connected, idle client (server and client side)
}

func (r result) print(cfg config) {
	fmt.Printf("db=%s clients=%d posted=%d target_rate=%d/s\n", cfg.db, cfg.clients, int(float64(cfg.rate)*cfg.duration.Seconds()), cfg.rate)
	fmt.Printf("  sustained: %.0f messages/s posted, %.0f messages/s delivered to all %d clients (%d deliveries)\n",
		r.posted, r.delivered, cfg.clients, r.deliveries)
	fmt.Printf("  post->delivery latency: p50=%.2fms p99=%.2fms max=%.2fms\n", ms(r.p50), ms(r.p99), ms(r.max))
	fmt.Printf("  post round trip: p50=%.2fms p99=%.2fms (%d posters: at most %.0f posts/s at the p50)\n",
		ms(r.postP50), ms(r.postP99), cfg.posters, float64(cfg.posters)/max(1e-9, r.postP50.Seconds()))
	fmt.Printf("  websocket: %.0f frames per client per second, %.1f messages and %.0f bytes per frame\n",
		r.framesPerSec, float64(r.deliveries)/float64(max(1, r.frames)), float64(r.bytes)/float64(max(1, r.frames)))
	fmt.Printf("  store: %.1f SQL statements per post (BEGIN/COMMIT not counted), %.1f posts per transaction\n", r.statements, r.perCommit)
	fmt.Printf("  cpu: %.0fµs per message, server and its %d clients together (compare these on a busy machine)\n",
		float64(r.cpuPerMsg)/float64(time.Microsecond), cfg.clients)
	fmt.Printf("  server: %.0fµs per message (%.1f %% of samples; the unlabeled ones: the server's goroutines and the runtime's, GC background workers included)\n",
		float64(r.serverCPUPerMsg)/float64(time.Microsecond), 100*r.serverShare)
	fmt.Printf("  memory: %.1f KiB per idle subscriber (heap and stacks, server and client side together)\n", r.idlePerClient)
}

// printFigures prints the figure lines of the whole call: the lowest
// sustained rate, the highest p99 and the median p50 over the runs.
func printFigures(prefix string, rs []result) {
	rate, p99 := rs[0].delivered, rs[0].p99
	p50s := make([]time.Duration, len(rs))
	for i, r := range rs {
		rate, p99 = min(rate, r.delivered), max(p99, r.p99)
		p50s[i] = r.p50
	}
	sort.Slice(p50s, func(i, j int) bool { return p50s[i] < p50s[j] })
	p50 := p50s[len(p50s)/2]
	if len(p50s)%2 == 0 {
		p50 = (p50s[len(p50s)/2-1] + p50s[len(p50s)/2]) / 2
	}
	if len(rs) > 1 {
		fmt.Printf("%d runs: min rate %.0f messages/s, max p99 %.2fms, median p50 %.2fms\n", len(rs), rate, ms(p99), ms(p50))
	}
	cpu, serverCPU, mem := rs[0].cpuPerMsg, rs[0].serverCPUPerMsg, rs[0].idlePerClient
	for _, r := range rs {
		cpu, serverCPU, mem = max(cpu, r.cpuPerMsg), max(serverCPU, r.serverCPUPerMsg), max(mem, r.idlePerClient)
	}
	fmt.Printf("figure %s_rate %.0f msg/s\n", prefix, rate)
	fmt.Printf("figure %s_p99 %.2f ms\n", prefix, ms(p99))
	fmt.Printf("figure %s_p50 %.2f ms\n", prefix, ms(p50))
	fmt.Printf("figure %s_cpu_us_per_msg %.0f us\n", prefix, float64(cpu)/float64(time.Microsecond))
	fmt.Printf("figure %s_server_cpu_us_per_msg %.0f us\n", prefix, float64(serverCPU)/float64(time.Microsecond))
	fmt.Printf("figure %s_idle_kib_per_subscriber %.1f KiB\n", prefix, mem)
}

// memInUse is the process's heap and stacks in use, after a collection.
func memInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// server is the office under test on a loopback port.
type server struct {
	db    *store.DB
	base  string
	token string
	close func()
}

func startServer(ctx context.Context, kind string, wcfg web.Config) (*server, error) {
	db, cleanup, err := openDB(ctx, kind)
	if err != nil {
		return nil, err
	}
	off, err := office.New(ctx, db, office.Config{})
	if err != nil {
		cleanup()
		return nil, err
	}
	token, err := off.Bootstrap(ctx, "admin")
	if err != nil {
		cleanup()
		return nil, err
	}
	srv := web.New(wcfg, web.Services{Office: off})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cleanup()
		return nil, err
	}
	go srv.Serve(ln)
	stop := func() { srv.Shutdown(context.Background()); cleanup() }
	return &server{db: db, base: "http://" + ln.Addr().String(), token: token, close: stop}, nil
}

func run(cfg config) (result, error) {
	srv, err := startServer(context.Background(), cfg.db, web.Config{FrameInterval: cfg.frameInterval, FrameBudget: cfg.frameBudget})
	if err != nil {
		return result{}, err
	}
	defer srv.close()
	total := int(float64(cfg.rate) * cfg.duration.Seconds())
	lat := newLatencies(cfg.clients * total)
	var wg sync.WaitGroup
	// A read buffer that holds a whole frame of a busy feed: one read
	// system call per frame, as a browser's client makes, instead of one
	// per 4 KiB (gorilla's default).
	dialer := &websocket.Dialer{ReadBufferSize: 64 << 10, HandshakeTimeout: 10 * time.Second}
	mem0 := memInUse()
	conns := make([]*websocket.Conn, 0, cfg.clients)
	for i := 0; i < cfg.clients; i++ {
		conn, _, err := dialer.Dial("ws"+strings.TrimPrefix(srv.base, "http")+"/api/v1/ws",
			http.Header{"Authorization": {"Bearer " + srv.token}})
		if err != nil {
			return result{}, fmt.Errorf("dial client %d: %w", i, err)
		}
		conns = append(conns, conn)
	}
	time.Sleep(200 * time.Millisecond) // every server handler parked on its feed
	// Measured before the clients' readers start (each keeps a latency
	// per message); the clients' 64 KiB read buffers are theirs, not the
	// server's.
	idle := (float64(memInUse())-float64(mem0))/float64(cfg.clients)/1024 - float64(dialer.ReadBufferSize)/1024
	// The server runs outside the client label (startServer above), the
	// bench's receivers and posters inside it.
	asClient(context.Background(), func(context.Context) {
		for _, conn := range conns {
			wg.Add(1)
			go receive(conn, total, lat, &wg)
		}
	})
	stmts0, commits0 := srv.db.Counts()
	win, err := startCPUWindow()
	if err != nil {
		return result{}, err
	}
	cpu0 := cpuTime()
	start := time.Now()
	rtt := newLatencies(total)
	var failed int64
	asClient(context.Background(), func(context.Context) { failed = postAll(srv, cfg, total, start, rtt) })
	postedIn := time.Since(start)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		win.stop()
		return result{}, fmt.Errorf("clients did not receive every message within 60 s")
	}
	deliveredIn := time.Since(start)
	cpu := cpuTime() - cpu0
	prof, err := win.stop()
	if err != nil {
		return result{}, err
	}
	split, err := splitCPU(prof)
	if err != nil {
		return result{}, err
	}
	if failed > 0 {
		return result{}, fmt.Errorf("%d posts failed", failed)
	}
	stmts, commits := srv.db.Counts()
	perMsg := cpu / time.Duration(total)
	r := result{cpuPerMsg: perMsg, serverCPUPerMsg: time.Duration(split.serverShare() * float64(perMsg)), serverShare: split.serverShare(), profile: prof,
		posted: float64(total) / postedIn.Seconds(), delivered: float64(total) / deliveredIn.Seconds(),
		deliveries: lat.n.Load(), frames: lat.frames.Load(), bytes: lat.bytes.Load(),
		framesPerSec: float64(lat.frames.Load()) / float64(cfg.clients) / deliveredIn.Seconds(), statements: float64(stmts-stmts0) / float64(total),
		perCommit: float64(total) / float64(max(1, commits-commits0)), idlePerClient: idle}
	r.p50, r.p99, r.max = lat.percentiles()
	r.postP50, r.postP99, _ = rtt.percentiles()
	return r, nil
}

// postAll posts total messages at cfg.rate from cfg.posters concurrent
// clients, each waiting for its answer, and returns how many failed.
func postAll(srv *server, cfg config, total int, start time.Time, rtt *latencies) int64 {
	var failed atomic.Int64
	ticks := make(chan struct{}, total)
	var pw sync.WaitGroup
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.posters}}
	for p := 0; p < cfg.posters; p++ {
		pw.Add(1)
		go func() {
			defer pw.Done()
			var mine []time.Duration
			defer func() { rtt.add(mine, 0, 0) }()
			for range ticks {
				t0 := time.Now()
				if post(httpc, srv.base, srv.token) != nil {
					failed.Add(1)
				}
				mine = append(mine, time.Since(t0))
			}
		}()
	}
	interval := time.Second / time.Duration(cfg.rate)
	for i := 0; i < total; i++ {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		ticks <- struct{}{}
	}
	close(ticks)
	pw.Wait()
	return failed.Load()
}

// sendMark starts each posted body, before its send time. It begins with
// a byte that is rare in the JSON frames (the first byte of "§"), which
// keeps the clients' scan for it fast; a quote would match everywhere.
const sendMark = "§t="

// post sends one message whose body carries its send time.
func post(c *http.Client, base, token string) error {
	body := fmt.Sprintf(`{"body":"%s%d"}`, sendMark, time.Now().UnixNano())
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
	marker, field := []byte(sendMark), []byte(`"body":"`)
	var frame bytes.Buffer // reused: a busy client reads thousands of frames
	mine := make([]time.Duration, 0, n)
	var frames, size int64
	defer func() { lat.add(mine, frames, size) }() // one lock per client, not per message
	for got := 0; got < n; {
		_, r, err := conn.NextReader()
		if err != nil {
			return
		}
		frame.Reset()
		if _, err := frame.ReadFrom(r); err != nil {
			return
		}
		now := time.Now().UnixNano()
		data := frame.Bytes()
		frames, size = frames+1, size+int64(len(data))
		for {
			i := bytes.Index(data, marker)
			if i < 0 {
				break
			}
			inBody := bytes.HasSuffix(data[:i], field) // not the rendered HTML
			data = data[i+len(marker):]
			if !inBody {
				continue
			}
			end := bytes.IndexByte(data, '"')
			sent, _ := strconv.ParseInt(string(data[:end]), 10, 64)
			mine = append(mine, time.Duration(now-sent))
			got++
		}
	}
}

type latencies struct {
	mu sync.Mutex
	d  []time.Duration
	n  atomic.Int64
	// frames and bytes the clients read
	frames, bytes atomic.Int64
}

func newLatencies(capacity int) *latencies { return &latencies{d: make([]time.Duration, 0, capacity)} }

func (l *latencies) add(ds []time.Duration, frames, bytes int64) {
	l.mu.Lock()
	l.d = append(l.d, ds...)
	l.mu.Unlock()
	l.n.Add(int64(len(ds)))
	l.frames.Add(frames)
	l.bytes.Add(bytes)
}

func (l *latencies) percentiles() (p50, p99, max time.Duration) {
	sort.Slice(l.d, func(i, j int) bool { return l.d[i] < l.d[j] })
	if len(l.d) == 0 {
		return 0, 0, 0
	}
	at := func(q float64) time.Duration { return l.d[int(q*float64(len(l.d)-1))] }
	return at(0.5), at(0.99), l.d[len(l.d)-1]
}

// cpuTime returns the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
