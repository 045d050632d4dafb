package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"github.com/gorilla/websocket"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// replicaProc is the real server binary running as a child process.
type replicaProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	URL    string // http://127.0.0.1:PORT/
	Token  string // the admin token, printed on the database's first start (see token)
	done   chan struct{}
	mu     sync.Mutex
	stderr bytes.Buffer
}

var replicaURLRE = regexp.MustCompile(`Bullpen is running: (http://\S+)`)

// replicaPostgres returns the URL of a fresh PostgreSQL database; without
// a test server it skips, or fails under CI=true.
func replicaPostgres(t *testing.T) string {
	t.Helper()
	if os.Getenv(storetest.EnvPostgres) == "" && os.Getenv("CI") == "true" {
		t.Fatalf("%s is not set in CI: the replica tests would be skipped", storetest.EnvPostgres)
	}
	return storetest.Config(t, store.Postgres).URL
}

// buildReplicaBinary builds this command into a temp dir.
func buildReplicaBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bullpen")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startReplica starts `bullpen serve` on a free loopback port with the
// given extra environment, and waits until it listens.
func startReplica(t *testing.T, bin string, env ...string) *replicaProc {
	t.Helper()
	p := &replicaProc{t: t, done: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve")
	p.cmd.Env = append(os.Environ(), "BULLPEN_ADDR=127.0.0.1:0", "BULLPEN_DATA="+t.TempDir(), "BULLPEN_SANDBOXES=off")
	p.cmd.Env = append(p.cmd.Env, env...)
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = lockedWriter{&p.mu, &p.stderr}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go p.readStdout(stdout, ready)
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(p.stop)
	select {
	case <-ready:
	case <-p.done:
		t.Fatalf("server exited before listening:\n%s", p.Stderr())
	case <-time.After(90 * time.Second):
		t.Fatalf("server did not start in 90 s:\n%s", p.Stderr())
	}
	return p
}

// readStdout records the URL and the token. The URL line and the Data
// line come first; the token (first start only) right after them.
func (p *replicaProc) readStdout(r io.Reader, ready chan struct{}) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		if m := replicaURLRE.FindStringSubmatch(line); m != nil {
			p.URL = m[1]
		}
		if tok := tokenRE.FindString(line); tok != "" {
			p.Token = tok
		}
		p.mu.Unlock()
		if strings.HasPrefix(line, "Data:") {
			close(ready)
		}
	}
}

// token waits briefly for the admin token the first start prints.
func (p *replicaProc) token() string {
	for range 50 {
		p.mu.Lock()
		tok := p.Token
		p.mu.Unlock()
		if tok != "" {
			return tok
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.t.Fatalf("the first start printed no admin token")
	return ""
}

// Stderr returns what the process logged.
func (p *replicaProc) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// kill sends SIGKILL and waits for the process to die.
func (p *replicaProc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop asks the process to shut down, killing it if it does not.
func (p *replicaProc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.kill()
	}
}

// api calls the process's REST API with token; it returns the status.
func (p *replicaProc) api(token, method, path string, body, out any) (int, error) {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(p.URL, "/")+"/api/v1"+path, r)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("decode %s: %w", raw, err)
		}
	}
	return resp.StatusCode, nil
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// replicaSQL opens the test database directly, to check what is stored.
func replicaSQL(t *testing.T, url string) *gorm.DB {
	t.Helper()
	g, err := gorm.Open(postgres.Open(url), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if db, err := g.DB(); err == nil {
			db.Close()
		}
	})
	return g
}

// assertSeqGapFree checks that the events table holds exactly 1..N.
func assertSeqGapFree(t *testing.T, g *gorm.DB) int64 {
	t.Helper()
	var seqs []int64
	if err := g.Raw("SELECT seq FROM events ORDER BY seq").Scan(&seqs).Error; err != nil {
		t.Fatal(err)
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("events.seq has a gap: position %d holds %d (…%v)", i+1, s, seqs[max(0, i-3):i+1])
		}
	}
	return int64(len(seqs))
}

// wsCollector records the stored events a websocket client receives.
type wsCollector struct {
	mu   sync.Mutex
	seqs []int64
}

// collectEvents opens p's websocket from the start of the log and records
// every stored event it delivers, until the test ends.
func collectEvents(t *testing.T, p *replicaProc, token string) *wsCollector {
	t.Helper()
	u := strings.Replace(strings.TrimSuffix(p.URL, "/"), "http", "ws", 1) + "/api/v1/ws?since=0"
	conn, resp, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", u, err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	c := &wsCollector{}
	go func() {
		for {
			var f struct {
				Events []bullpen.Event `json:"events"`
			}
			if err := conn.ReadJSON(&f); err != nil {
				return
			}
			c.mu.Lock()
			for _, ev := range f.Events {
				if ev.Seq != 0 {
					c.seqs = append(c.seqs, ev.Seq)
				}
			}
			c.mu.Unlock()
		}
	}()
	return c
}

// assertAll waits up to 15 s for the client to reach seq n and checks it
// saw exactly 1..n, in order.
func (c *wsCollector) assertAll(t *testing.T, replica int, n int64) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c.mu.Lock()
		got := slices.Clone(c.seqs)
		c.mu.Unlock()
		if len(got) >= int(n) || time.Now().After(deadline) {
			for i, s := range got {
				if s != int64(i+1) {
					t.Fatalf("replica %d's websocket: event %d has seq %d (…%v): out of order, doubled or missing", replica, i+1, s, got[max(0, i-3):i+1])
				}
			}
			if len(got) != int(n) {
				t.Fatalf("replica %d's websocket saw %d events, the table holds %d", replica, len(got), n)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
