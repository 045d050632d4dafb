// Command bullpen-restbench measures sandbox start the way users and the
// public sandbox leaderboards do: at the client, through the REST API of a
// real server (bin/bullpen on loopback), from the create request to the
// first byte of a command's output. It runs three patterns, each n times:
// sequential, staggered (one started every -stagger, overlapping) and a
// burst (all at once), and prints median, p95, p99 and the success rate,
// with `bwrap --unshare-all echo hi` in the same run for a ratio.
//
//	make build && go run ./cmd/bullpen-restbench -n 100
//
// Figures are loopback figures: no network between client and server.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen/client"
)

func main() {
	bin := flag.String("bin", "bin/bullpen", "the server binary (make build)")
	n := flag.Int("n", 100, "sandboxes per pattern")
	stagger := flag.Duration("stagger", 200*time.Millisecond, "start interval of the staggered pattern")
	flag.Parse()
	if err := run(*bin, *n, *stagger); err != nil {
		fmt.Fprintln(os.Stderr, "restbench:", err)
		os.Exit(1)
	}
}

func run(bin string, n int, stagger time.Duration) error {
	srv, err := startServer(bin)
	if err != nil {
		return err
	}
	defer srv.stop()
	c, err := client.New(srv.url, srv.token)
	if err != nil {
		return err
	}
	fmt.Printf("server %s; %d sandboxes per pattern; measured at the client on loopback\n", srv.url, n)
	fmt.Printf("%-34s %8s %8s %8s %8s %9s\n", "pattern", "median", "p95", "p99", "success", "create p50")
	seq := measure(c, n, func(i int, start func()) { start() })
	report("sequential", seq)
	stag := measure(c, n, func(i int, start func()) { time.Sleep(stagger); go start() })
	report(fmt.Sprintf("staggered (one every %s)", stagger), stag)
	burst := measure(c, n, func(i int, start func()) { go start() })
	report("burst (all at once)", burst)
	if b := bwrapTimes(n); len(b) > 0 {
		bm := percentile(b, 50)
		fmt.Printf("%-34s %8s\n", "bwrap --unshare-all echo hi", ms(bm))
		fmt.Printf("ratio of medians to bwrap: sequential %.2fx, staggered %.2fx, burst %.2fx\n",
			ratio(seq.first, bm), ratio(stag.first, bm), ratio(burst.first, bm))
	}
	return nil
}

// result is one pattern's latencies.
type result struct {
	first, create []time.Duration
	failed        int
	n             int
}

// measure runs n create→first-output trials, launched by launch (which
// calls start inline for sequential, in a goroutine otherwise), then
// terminates the sandboxes.
func measure(c *client.Client, n int, launch func(i int, start func())) result {
	var mu sync.Mutex
	var wg sync.WaitGroup
	res := result{n: n}
	var ids []string
	for i := range n {
		wg.Add(1)
		launch(i, func() {
			defer wg.Done()
			id, create, first, err := trial(c)
			mu.Lock()
			defer mu.Unlock()
			if id != "" {
				ids = append(ids, id)
			}
			if err != nil {
				res.failed++
				fmt.Fprintln(os.Stderr, "trial:", err)
				return
			}
			res.create = append(res.create, create)
			res.first = append(res.first, first)
		})
	}
	wg.Wait()
	for _, id := range ids {
		_ = c.TerminateSandbox(context.Background(), id)
	}
	return res
}

// trial creates a sandbox and runs echo in it, returning the time to the
// create's answer and to the first byte of output, both from the create
// request.
func trial(c *client.Client) (id string, create, first time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t0 := time.Now()
	sb, err := c.CreateSandbox(ctx, client.SandboxSpec{Timeout: "10m"})
	if err != nil {
		return "", 0, 0, err
	}
	create = time.Since(t0)
	w := &firstWrite{}
	res, err := c.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"echo", "hi"}}, w, io.Discard)
	if err != nil {
		return sb.ID, 0, 0, err
	}
	if res.ExitCode != 0 || w.at.IsZero() {
		return sb.ID, 0, 0, fmt.Errorf("echo: exit %d, output %v", res.ExitCode, !w.at.IsZero())
	}
	return sb.ID, create, w.at.Sub(t0), nil
}

// firstWrite notes when the first byte arrived.
type firstWrite struct{ at time.Time }

func (w *firstWrite) Write(b []byte) (int, error) {
	if w.at.IsZero() && len(b) > 0 {
		w.at = time.Now()
	}
	return len(b), nil
}

func report(name string, r result) {
	ok := float64(r.n-r.failed) / float64(r.n) * 100
	fmt.Printf("%-34s %8s %8s %8s %7.0f%% %9s\n", name, ms(percentile(r.first, 50)), ms(percentile(r.first, 95)),
		ms(percentile(r.first, 99)), ok, ms(percentile(r.create, 50)))
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func ratio(d []time.Duration, base time.Duration) float64 {
	if base == 0 {
		return 0
	}
	return float64(percentile(d, 50)) / float64(base)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }

// bwrapTimes times `bwrap --unshare-all echo hi` n times; none without bwrap.
func bwrapTimes(n int) []time.Duration {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		fmt.Println("bwrap not installed: no ratio")
		return nil
	}
	var out []time.Duration
	for range n {
		t0 := time.Now()
		cmd := exec.Command(path, "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "echo", "hi")
		stdout, _ := cmd.StdoutPipe()
		if cmd.Start() != nil {
			return nil
		}
		if _, err := bufio.NewReader(stdout).ReadByte(); err == nil {
			out = append(out, time.Since(t0))
		}
		cmd.Wait()
	}
	return out
}

// server is the bullpen process under test.
type server struct {
	cmd        *exec.Cmd
	url, token string
	dir        string
}

var (
	urlRE   = regexp.MustCompile(`Bullpen is running: (\S+)`)
	tokenRE = regexp.MustCompile(`^\s+(bp_\S{20,})\s*$`)
)

func startServer(bin string) (*server, error) {
	dir, err := os.MkdirTemp("", "bullpen-restbench-")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir}
	s.cmd = exec.Command(bin, "--data", dir, "--addr", "127.0.0.1:0", "--log-format", "json")
	s.cmd.Env = append(os.Environ(), "BULLPEN_TELEGRAM_TOKEN=")
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (make build first): %w", bin, err)
	}
	sc := bufio.NewScanner(out)
	deadline := time.After(60 * time.Second)
	lines := make(chan string)
	go func() {
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for s.url == "" || s.token == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				return nil, fmt.Errorf("%s exited before it was ready", bin)
			}
			if m := urlRE.FindStringSubmatch(l); m != nil {
				s.url = m[1]
			}
			if m := tokenRE.FindStringSubmatch(l); m != nil {
				s.token = m[1]
			}
		case <-deadline:
			s.stop()
			return nil, fmt.Errorf("%s not ready in 60 s", bin)
		}
	}
	go func() {
		for range lines {
		}
	}()
	return s, nil
}

func (s *server) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
	}
	os.RemoveAll(s.dir)
}
