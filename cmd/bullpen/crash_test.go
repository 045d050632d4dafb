package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/store"
)

// crashAgents is how many agents each round mentions.
const crashAgents = 10

// The crash scenario against the real binary: ten agents are
// mentioned, the OpenAI-compatible model takes a while per completion, and
// the server is killed with SIGKILL while turns are between their post
// and their end, three times over, then left to finish. Every wake gets
// exactly one reply: none lost, none twice.
func TestCrashMidTurnRepliesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	bin := buildBinary(t)
	fake := llmtest.NewFakeOpenAI(crashModel(800 * time.Millisecond))
	defer fake.Close()
	data := t.TempDir()
	env := append(os.Environ(), "BULLPEN_OPENAI_BASE_URL="+fake.BaseURL(), "BULLPEN_OPENAI_API_KEY=test",
		"BULLPEN_PROVIDER=openai", "BULLPEN_SANDBOXES=off", "BULLPEN_TELEGRAM_TOKEN=")

	srv := startServer(t, bin, data, env)
	api := apiClient{t: t, base: strings.TrimSuffix(srv.url, "/"), token: srv.token}
	var handles []string
	for i := range crashAgents {
		h := fmt.Sprintf("w%d", i)
		api.do("POST", "/api/v1/agents", map[string]any{"role": "starter/lead", "handle": h, "name": "Worker " + h}, 201, nil)
		handles = append(handles, "@"+h)
	}
	// Each round in its own channel: a turn folds only one channel's wakes
	// together, so each trigger gets a reply of its own from each agent.
	var triggers []bullpen.Message
	kills := 0
	for round := range 3 {
		var c bullpen.Channel
		api.do("POST", "/api/v1/channels", map[string]any{"name": fmt.Sprintf("crash-%d", round)}, 201, &c)
		var m bullpen.Message
		api.do("POST", fmt.Sprintf("/api/v1/channels/%d/messages", c.ID), map[string]any{
			"body": fmt.Sprintf("%s round %d: reply once", strings.Join(handles, " "), round)}, 201, &m)
		triggers = append(triggers, m)
		// Kill while some turns have posted and wait on their next step.
		waitUntil(t, 20*time.Second, func() bool { return followUps(fake.Requests(), m.ID) >= 3 })
		srv.kill(t)
		kills++
		srv = startServer(t, bin, data, env)
		api.base = strings.TrimSuffix(srv.url, "/")
	}
	waitQuiet(t, data)
	srv.stop(t)
	assertOneReplyEach(t, data, triggers, crashAgents)
	t.Logf("kills: %d, wakes: %d, model requests: %d", kills, len(triggers)*crashAgents, len(fake.Requests()))
}

// crashModel answers a first step with a post_message call naming the
// trigger, and a follow-up step with an empty final answer.
func crashModel(delay time.Duration) llmtest.Handler {
	return func(req llmtest.CapturedRequest) llmtest.Reply {
		for _, m := range req.Messages {
			if m.Role == "tool" {
				return llmtest.Reply{Delay: delay, Text: ""}
			}
		}
		return llmtest.Reply{Delay: delay, ToolCalls: []llm.ToolCall{{Name: "post_message", Arguments: []byte(`{"body":"my one reply"}`)}}}
	}
}

var triggerRE = regexp.MustCompile(`\[(\d+)\] @admin`)

// followUps counts the follow-up requests (after a tool result) of turns
// triggered by message id.
func followUps(reqs []llmtest.CapturedRequest, id int64) int {
	n := 0
	for _, r := range reqs {
		if len(r.Messages) < 3 || r.Messages[len(r.Messages)-1].Role != "tool" {
			continue
		}
		for _, m := range triggerRE.FindAllStringSubmatch(r.Messages[0].Content, -1) {
			if m[1] == fmt.Sprint(id) {
				n++
				break
			}
		}
	}
	return n
}

// assertOneReplyEach reads the stopped server's database: each trigger's
// thread holds exactly one agent reply per agent, and no wake is open.
func assertOneReplyEach(t *testing.T, data string, triggers []bullpen.Message, agents int) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dups, lost := 0, 0
	for _, tr := range triggers {
		id := tr.ID
		msgs, err := db.RecentMessages(ctx, tr.ChannelID, id, 0, 500)
		if err != nil {
			t.Fatal(err)
		}
		per := map[int64]int{}
		for _, m := range msgs {
			if m.Source == bullpen.SourceAgent {
				per[m.AuthorID]++
			}
		}
		for _, n := range per {
			dups += max(n-1, 0)
		}
		lost += agents - len(per)
		if len(per) != agents || dups > 0 {
			t.Errorf("trigger %d: replies per agent %v, want %d agents with 1 each", id, per, agents)
		}
	}
	evs, err := db.EventsAfter(ctx, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	abandoned := 0
	for _, ev := range evs {
		if ev.Type == "agent.turn_abandoned" {
			abandoned++
		}
	}
	if abandoned == 0 {
		t.Error("no turn was caught mid-turn by the kills: the test proved nothing")
	}
	t.Logf("turns caught mid-turn by a kill: %d, duplicates: %d, lost: %d", abandoned, dups, lost)
}

// waitQuiet waits until no wake is pending or claimed for a while.
func waitQuiet(t *testing.T, data string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	calm := 0
	waitUntil(t, 30*time.Second, func() bool {
		p, c, err := db.InboxCounts(ctx)
		if err == nil && p == 0 && c == 0 {
			calm++
		} else {
			calm = 0
		}
		return calm >= 5
	})
}

func waitUntil(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("condition not met within %s", d)
}

// buildBinary builds this command into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bullpen")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// server is a running bullpen process.
type server struct {
	cmd   *exec.Cmd
	url   string
	token string
	done  chan struct{}
}

var (
	crashURLRE   = regexp.MustCompile(`Bullpen is running: (\S+)`)
	crashTokenRE = regexp.MustCompile(`^\s+(\S{20,})\s*$`)
)

// startServer runs the binary on data and waits for its URL (and, at
// first start, the admin token).
func startServer(t *testing.T, bin, data string, env []string) *server {
	t.Helper()
	return startServerAt(t, bin, data, "127.0.0.1:0", env)
}

// startServerAt is startServer on a listen address of the caller's.
func startServerAt(t *testing.T, bin, data, addr string, env []string) *server {
	t.Helper()
	cmd := exec.Command(bin, "--data", data, "--addr", addr)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if m := crashURLRE.FindStringSubmatch(line); m != nil {
				s.url = m[1]
				if _, err := os.Stat(filepath.Join(data, ".token-seen")); err == nil {
					close(ready)
				}
			}
			if m := crashTokenRE.FindStringSubmatch(line); m != nil && s.url != "" {
				s.token = m[1]
				os.WriteFile(filepath.Join(data, ".token-seen"), []byte(s.token), 0o600)
				close(ready)
			}
		}
		cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() { s.kill(t) })
	select {
	case <-ready:
	case <-s.done:
		t.Fatal("bullpen exited before it was ready")
	case <-time.After(30 * time.Second):
		t.Fatal("bullpen not ready in 30s")
	}
	if s.token == "" {
		tok, _ := os.ReadFile(filepath.Join(data, ".token-seen"))
		s.token = string(tok)
	}
	return s
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill(t *testing.T) {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// stop asks the process to shut down cleanly.
func (s *server) stop(t *testing.T) {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		t.Error("bullpen did not stop within 15s of SIGTERM")
		s.kill(t)
	}
}
