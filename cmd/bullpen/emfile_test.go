package main

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/fds"
)

// healthProbe waits for SIGUSR1, then GETs /healthz on the address it was
// given and prints the answer's status line.
const healthProbe = `
import signal, socket, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
print("ready", flush=True)
signal.sigwait([signal.SIGUSR1])
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=30)
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
print(s.makefile("rb").readline().decode().strip(), flush=True)
`

// TestMainListenerRidesOutEMFILE: a connection that arrives while the
// process has no descriptor left waits, and is served once descriptors
// are freed; the main listener keeps accepting afterwards (fasthttp alone
// takes "too many open files" as permanent and stops for good).
func TestMainListenerRidesOutEMFILE(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
	m, _ := startMain(t, t.TempDir())
	defer m.Close(context.Background())
	probe := exec.Command("python3", "-c", healthProbe, strings.TrimPrefix(strings.TrimSuffix(m.URL(), "/"), "http://"))
	out, err := probe.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := probe.Start(); err != nil {
		t.Fatal(err)
	}
	defer probe.Process.Kill()
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	if l := <-lines; l != "ready" {
		t.Fatalf("probe said %q", l)
	}

	free := fillDescriptors(t)
	defer free()
	probe.Process.Signal(syscall.SIGUSR1)
	time.Sleep(500 * time.Millisecond) // the probe connects; accept finds no descriptor
	free()
	select {
	case l := <-lines:
		if !strings.HasPrefix(l, "HTTP/1.1 200") {
			t.Fatalf("/healthz for a connection made with no descriptor free: %q, want 200", l)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("/healthz did not answer a connection made with no descriptor free, 15 s after they were freed")
	}
	resp, err := http.Get(m.URL() + "healthz")
	if err != nil {
		t.Fatalf("the main listener after running out of descriptors: %v", err)
	}
	resp.Body.Close()
}

// fillDescriptors lowers the soft limit near what is open and takes every
// descriptor left; the returned func frees them and restores the limit.
func fillDescriptors(t *testing.T) func() {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	u, err := fds.Count()
	if err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = uint64(u.Open + 32)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	var held []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				t.Fatalf("filling the descriptor table: %v", err)
			}
			break
		}
		held = append(held, f)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			for _, f := range held {
				f.Close()
			}
			syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
		})
	}
}
