package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"github.com/libtnb/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// ackModel answers each turn with one post_message naming the trigger
// messages it answers ("ack 12 15"), then ends; each call takes a while,
// so that turns are in flight when the database goes away.
type ackModel struct{ delay time.Duration }

func (ackModel) Name() string { return "scripted" }

var ackTriggerRE = regexp.MustCompile(`(?m)^- \(\w+\) \[(\d+)`)

func (p ackModel) Complete(ctx context.Context, req llm.Request, _ func(string)) (llm.Response, error) {
	select {
	case <-time.After(p.delay):
	case <-ctx.Done():
		return llm.Response{}, ctx.Err()
	}
	v := ViewOf(req)
	if v.Steps > 0 {
		return llm.Response{Text: "done"}, nil
	}
	var ids []string
	for _, m := range ackTriggerRE.FindAllStringSubmatch(v.Packet, -1) {
		ids = append(ids, m[1])
	}
	return llm.Response{ToolCalls: []llm.ToolCall{call(bullpen.ToolPostMessage, map[string]any{"body": "ack " + strings.Join(ids, " ")})}}, nil
}

// outage makes the database fail for real and brings it back.
type outage interface {
	cut()
	restore()
}

// pgProxy is a TCP proxy in front of PostgreSQL: cut closes every
// connection through it and refuses new ones, as a stopped server does
// (the real driver sees the connection drop, then connection refused),
// and restore lets connections through again.
type pgProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func newPGProxy(t *testing.T, cfg *store.Config) *pgProxy {
	t.Helper()
	u, err := url.Parse(cfg.URL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{ln: ln, target: u.Host, conns: map[net.Conn]bool{}}
	if !strings.Contains(p.target, ":") {
		p.target += ":5432"
	}
	u.Host = ln.Addr().String()
	cfg.URL = u.String()
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.cut() })
	return p
}

func (p *pgProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		go func() { io.Copy(up, c); up.Close(); c.Close() }()
		go func() { io.Copy(c, up); up.Close(); c.Close() }()
	}
}

func (p *pgProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

func (p *pgProxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// newSQLiteLock returns a holder of SQLite's write lock from another connection, as
// another process (a backup, a migration) would: every write of the
// server waits its busy timeout and fails with SQLITE_BUSY until the
// lock is let go. Reads go on (WAL).
func newSQLiteLock(t *testing.T, cfg store.Config) *sqliteLockHolder {
	g, err := gorm.Open(sqlite.Open(filepath.Join(cfg.DataDir, "bullpen.db")+"?_pragma=journal_mode(WAL)"), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := g.DB()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqlDB.Close() })
	return &sqliteLockHolder{t: t, db: g}
}

type sqliteLockHolder struct {
	t   *testing.T
	db  *gorm.DB
	mu  sync.Mutex
	end func()
}

func (l *sqliteLockHolder) cut() {
	sqlDB, _ := l.db.DB()
	conn, err := sqlDB.Conn(context.Background())
	if err != nil {
		l.t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		l.t.Fatalf("take the write lock: %v", err)
	}
	l.mu.Lock()
	l.end = func() { conn.ExecContext(context.Background(), "ROLLBACK"); conn.Close() }
	l.mu.Unlock()
}

func (l *sqliteLockHolder) restore() {
	l.mu.Lock()
	end := l.end
	l.end = nil
	l.mu.Unlock()
	if end != nil {
		end()
	}
}

// Under load, the database fails every write for 10 s while turns are in
// flight. Within 15 s of its return every mention posted is answered,
// exactly once, and each agent answers its mentions in order.
func TestOutageDoesNotStrandTurns(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10 s outage")
	}
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			cfg := storetest.Config(t, d)
			var out outage
			if d == store.Postgres {
				out = newPGProxy(t, &cfg)
			}
			h := newHarnessOn(t, cfg, map[string]llm.Provider{"scripted": ackModel{delay: 100 * time.Millisecond}}, func(c *Config) {
				if os.Getenv("BULLPEN_TEST_LOG") != "" {
					c.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
				}
			})
			if d == store.SQLite {
				out = newSQLiteLock(t, cfg)
			}
			agents := []bullpen.Member{h.hire("starter/lead"), h.hire("starter/engineer"), h.hire("starter/pm"), h.hire("starter/designer")}
			h.start()
			since := h.off.Hub().Last()

			var (
				mu     sync.Mutex
				posted = map[int64]time.Time{} // message → when its post returned
				stop   = make(chan struct{})
				wg     sync.WaitGroup
			)
			for _, a := range agents { // the load: each agent is mentioned every 100 ms
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						case <-time.After(100 * time.Millisecond):
						}
						m, err := h.off.Post(context.Background(), h.admin, bullpen.PostInput{ChannelID: h.general.ID,
							Body: fmt.Sprintf("@%s question %d", a.Handle, i), Source: bullpen.SourceWeb})
						if err == nil {
							mu.Lock()
							posted[m.ID] = time.Now()
							mu.Unlock()
						}
					}
				}()
			}
			waitFor(t, func() bool { _, c, err := h.db.InboxCounts(context.Background()); return err == nil && c >= 3 })
			_, claimed, _ := h.db.InboxCounts(context.Background())
			out.cut()
			time.Sleep(10 * time.Second)
			out.restore()
			t.Logf("%d wakes were claimed when the database went away; back at %s", claimed, time.Now().Format("15:04:05.000"))
			back := time.Now()
			time.Sleep(time.Second) // mentions right after the return, behind the stranded ones
			close(stop)
			wg.Wait()

			// Every mention posted before the return (claimed, or queued
			// behind a claimed one, during the outage) is answered within
			// 15 s of it; those posted after it, in their turn.
			deadline := back.Add(15 * time.Second)
			var (
				acks       map[int64][]int64
				replies    map[int64][][]int64
				beforeDone time.Duration
			)
			for {
				acks, replies = h.acks(since)
				before, after := 0, 0
				for id, at := range posted {
					switch {
					case len(acks[id]) > 0:
					case at.Before(back):
						before++
					default:
						after++
					}
				}
				if before == 0 && beforeDone == 0 {
					beforeDone = time.Since(back).Round(time.Millisecond)
				}
				if before+after == 0 {
					t.Logf("%d mentions: those posted before the database came back answered %s after it, all %s after it",
						len(posted), beforeDone, time.Since(back).Round(time.Millisecond))
					break
				}
				if before > 0 && time.Now().After(deadline) {
					t.Fatalf("%d mentions posted before the database came back unanswered 15 s after it", before)
				}
				if time.Now().After(back.Add(45 * time.Second)) {
					t.Fatalf("%d mentions posted after the database came back unanswered 45 s after it", after)
				}
				time.Sleep(50 * time.Millisecond)
			}
			for id, by := range acks {
				if len(by) > 1 {
					t.Errorf("message %d answered %d times, want once", id, len(by))
				}
			}
			for agent, rs := range replies {
				for i := 1; i < len(rs); i++ {
					if slicesMax(rs[i-1]) > slicesMin(rs[i]) {
						t.Errorf("agent %d answered %v after %v: a newer mention went first", agent, rs[i], rs[i-1])
					}
				}
			}
		})
	}
}

// acks returns, for each message, the agents whose replies acknowledged
// it, and each agent's acknowledged message IDs per reply, in order.
func (h *harness) acks(since int64) (map[int64][]int64, map[int64][][]int64) {
	acks := map[int64][]int64{}
	replies := map[int64][][]int64{}
	for _, ev := range h.events(since) {
		if ev.Type != bullpen.EventMessagePosted {
			continue
		}
		var m bullpen.Message
		json.Unmarshal(ev.Payload, &m)
		body := strings.TrimPrefix(m.Body, simLabel)
		if m.Source == bullpen.SourceSystem || !strings.HasPrefix(body, "ack") {
			continue
		}
		var ids []int64
		for _, f := range strings.Fields(strings.TrimPrefix(body, "ack")) {
			id, _ := strconv.ParseInt(f, 10, 64)
			ids = append(ids, id)
			acks[id] = append(acks[id], m.AuthorID)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		replies[m.AuthorID] = append(replies[m.AuthorID], ids)
	}
	return acks, replies
}

func slicesMax(s []int64) int64 {
	var m int64
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

func slicesMin(s []int64) int64 {
	m := int64(1<<63 - 1)
	for _, v := range s {
		m = min(m, v)
	}
	return m
}
