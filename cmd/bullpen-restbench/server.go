package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

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
	logs, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	go func() { // the server's errors explain failed trials
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			if l := sc.Text(); strings.Contains(l, `"level":"ERROR"`) {
				fmt.Fprintln(os.Stderr, "server:", l)
			}
		}
	}()
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
		for l := range lines {
			if strings.Contains(l, `"level":"ERROR"`) {
				fmt.Fprintln(os.Stderr, "server:", l)
			}
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
