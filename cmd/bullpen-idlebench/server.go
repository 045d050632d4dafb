package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// server is the bin/bullpen process under test, in a throwaway data
// directory, with its model provider pointed at the fake.
type server struct {
	cmd        *exec.Cmd
	url, token string
	dir        string
}

var (
	urlRE   = regexp.MustCompile(`Bullpen is running: (\S+)`)
	tokenRE = regexp.MustCompile(`^\s+(bp_\S{20,})\s*$`)
)

// startServer runs bin with a fresh data directory and waits for its URL
// and first admin token. modelURL is an OpenAI-compatible base URL; an
// agent's workspace is stopped after sandboxIdle without use.
func startServer(bin, modelURL string, sandboxIdle time.Duration) (*server, error) {
	dir, err := os.MkdirTemp("", "bullpen-idlebench-")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir}
	s.cmd = exec.Command(bin, "--data", dir, "--addr", "127.0.0.1:0", "--log-format", "json",
		"--agent-sandbox-idle", sandboxIdle.String())
	s.cmd.Env = append(os.Environ(), "BULLPEN_TELEGRAM_TOKEN=", "BULLPEN_OPENAI_BASE_URL="+modelURL,
		"BULLPEN_OPENAI_API_KEY=fake", "BULLPEN_OPENAI_MODEL=fake-model", "BULLPEN_PROVIDER=openai",
		"BULLPEN_ANTHROPIC_API_KEY=", "BULLPEN_ANTHROPIC_OAUTH_TOKEN=")
	s.cmd.Stderr, _ = os.Create(dir + ".log")
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s (make build first): %w", bin, err)
	}
	if err := s.await(out); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// await reads the server's stdout until it has printed its URL and token.
func (s *server) await(out interface{ Read([]byte) (int, error) }) error {
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(60 * time.Second)
	for s.url == "" || s.token == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				return fmt.Errorf("the server exited before it was ready (log: %s.log)", s.dir)
			}
			if m := urlRE.FindStringSubmatch(l); m != nil {
				s.url = m[1]
			}
			if m := tokenRE.FindStringSubmatch(l); m != nil {
				s.token = m[1]
			}
		case <-deadline:
			return fmt.Errorf("the server was not ready in 60 s")
		}
	}
	go func() {
		for range lines {
		}
	}()
	return nil
}

// stop interrupts the server, kills it if it lingers, and removes its data.
func (s *server) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	os.RemoveAll(s.dir)
	if os.Getenv("IDLEBENCH_KEEPLOG") == "" {
		os.Remove(s.dir + ".log")
	}
}

// procSample is what /proc says about the server process at one moment.
type procSample struct {
	at       time.Time
	cpu      time.Duration // user + system time of the process itself
	rssBytes int64
	// anonBytes is the part of the RSS that is the process's own (heap,
	// stacks); the rest is file pages, mostly the binary's, shared with the
	// page cache.
	anonBytes int64
}

// userHZ is the unit of /proc/PID/stat's times: fixed at 100 by the Linux
// ABI whatever the kernel's own tick rate.
const userHZ = 100

// sample reads the server's CPU time and resident memory.
func (s *server) sample() (procSample, error) {
	pid := s.cmd.Process.Pid
	p := procSample{at: time.Now()}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return p, err
	}
	// The command name (field 2) may hold spaces: count from after it.
	rest := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(rest) < 13 {
		return p, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseInt(rest[11], 10, 64) // field 14
	stime, _ := strconv.ParseInt(rest[12], 10, 64) // field 15
	p.cpu = time.Duration(utime+stime) * time.Second / userHZ
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return p, err
	}
	p.rssBytes, p.anonBytes = statusKB(status, "VmRSS:"), statusKB(status, "RssAnon:")
	return p, nil
}

// statusKB reads one "Name:   123 kB" line of /proc/PID/status, in bytes.
func statusKB(status []byte, name string) int64 {
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, name); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
