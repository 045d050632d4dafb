// Package benchkit is what the whole-system bench commands share: running
// the real bin/bullpen on a throwaway data directory, percentiles, and the
// machine's load average.
package benchkit

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Server is a bin/bullpen process under test.
type Server struct {
	Cmd        *exec.Cmd
	URL, Token string
	Dir        string // its data directory, removed by Stop
}

var (
	urlRE   = regexp.MustCompile(`Bullpen is running: (\S+)`)
	tokenRE = regexp.MustCompile(`^\s+(bp_\S{20,})\s*$`)
)

// Start runs bin on a fresh data directory and a free loopback port, with
// JSON logs, the extra args and env, and waits (60 s at most) for its URL
// and first admin token. onLine, if not nil, gets every line the server
// writes to stderr, and every stdout line after it is ready.
func Start(bin string, args, env []string, onLine func(string)) (*Server, error) {
	dir, err := os.MkdirTemp("", "bullpen-bench-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir}
	s.Cmd = exec.Command(bin, append([]string{"--data", dir, "--addr", "127.0.0.1:0", "--log-format", "json"}, args...)...)
	s.Cmd.Env = append(append(os.Environ(), "BULLPEN_TELEGRAM_TOKEN="), env...)
	out, err := s.Cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	logs, err := s.Cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.Cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s (make build first): %w", bin, err)
	}
	go forLines(logs, onLine)
	if err := s.await(out, onLine); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	return s, nil
}

// await reads stdout until the server has printed its URL and token, then
// hands the rest to onLine.
func (s *Server) await(out io.Reader, onLine func(string)) error {
	lines := make(chan string)
	go func() {
		forLines(out, func(l string) { lines <- l })
		close(lines)
	}()
	deadline := time.After(60 * time.Second)
	for s.URL == "" || s.Token == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				return fmt.Errorf("exited before it was ready")
			}
			if m := urlRE.FindStringSubmatch(l); m != nil {
				s.URL = m[1]
			}
			if m := tokenRE.FindStringSubmatch(l); m != nil {
				s.Token = m[1]
			}
		case <-deadline:
			return fmt.Errorf("not ready in 60 s")
		}
	}
	go func() {
		for l := range lines {
			if onLine != nil {
				onLine(l)
			}
		}
	}()
	return nil
}

// forLines calls fn (if any) with each line of r until it ends.
func forLines(r io.Reader, fn func(string)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if fn != nil {
			fn(sc.Text())
		}
	}
}

// Stop interrupts the server, kills it if it lingers 20 s, and removes its
// data directory.
func (s *Server) Stop() {
	s.Cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		s.Cmd.Process.Kill()
		<-done
	}
	os.RemoveAll(s.Dir)
}

// Percentile is the p-th percentile (0–100) of d, 0 for none.
func Percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

// LoadAvg is /proc/loadavg's three averages, "?" if unreadable.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
