package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen/internal/benchkit"
)

// startServer runs bin with a fresh data directory, its model provider
// pointed at modelURL (OpenAI-compatible), an agent's workspace stopped
// after sandboxIdle without use. The server's log goes to a temporary
// file, kept when IDLEBENCH_KEEPLOG is set; stop removes it otherwise.
func startServer(bin, modelURL string, sandboxIdle time.Duration) (*benchkit.Server, func(), error) {
	log, err := os.CreateTemp("", "bullpen-idlebench-*.log")
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex
	write := func(l string) { mu.Lock(); fmt.Fprintln(log, l); mu.Unlock() }
	srv, err := benchkit.Start(bin, []string{"--agent-sandbox-idle", sandboxIdle.String()},
		[]string{"BULLPEN_OPENAI_BASE_URL=" + modelURL, "BULLPEN_OPENAI_API_KEY=fake", "BULLPEN_OPENAI_MODEL=fake-model",
			"BULLPEN_PROVIDER=openai", "BULLPEN_ANTHROPIC_API_KEY=", "BULLPEN_ANTHROPIC_OAUTH_TOKEN="}, write)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (log: %s)", err, log.Name())
	}
	stop := func() {
		srv.Stop()
		log.Close()
		if os.Getenv("IDLEBENCH_KEEPLOG") == "" {
			os.Remove(log.Name())
		}
	}
	return srv, stop, nil
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

// sample reads a process's CPU time and resident memory.
func sample(pid int) (procSample, error) {
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
