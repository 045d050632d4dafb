package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/bridge/telegram"
	"github.com/bullpen-hq/bullpen/bridge/telegram/tgtest"
	"github.com/bullpen-hq/bullpen/view"
	"gorm.io/gorm"
)

// Two real server processes on one PostgreSQL database, each with the
// Telegram bridge on: one polls and sends, the other stands by. Every
// Telegram message is posted once, every office message (posted through
// either process) reaches the chat once; after a SIGKILL of the leader
// the other takes over, and getUpdates is never held by two at once.
func TestTelegramOneBridgeAcrossReplicas(t *testing.T) {
	url := replicaPostgres(t)
	bin := buildReplicaBinary(t)
	const botToken = "424242:REPLICA-abcdefghijklmnopqrstuvwxyz"
	tg, err := tgtest.New(botToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	env := []string{"BULLPEN_DATABASE_URL=" + url, "BULLPEN_SHARED_DATABASE=on", "BULLPEN_TELEGRAM_TOKEN=" + botToken,
		"BULLPEN_TELEGRAM_API_URL=" + tg.URL, "BULLPEN_TELEGRAM_USERS=1001=admin"}
	p1 := startReplica(t, bin, env...)
	token := p1.token()
	waitBridge(t, p1, token, telegram.StateRunning)
	p2 := startReplica(t, bin, env...)
	waitBridge(t, p2, token, telegram.StateStandby)

	chat, user := tgtest.Chat{ID: 1001, Type: "private", FirstName: "Ada"}, tgtest.User{ID: 1001, FirstName: "Ada"}
	tg.SendText(chat, user, "hello")
	g := replicaSQL(t, url)
	var channel int64
	waitFor(t, "the chat linked", func() bool {
		return g.Raw("SELECT channel_id FROM telegram_chats WHERE chat_id = ?", chat.ID).Scan(&channel).Error == nil && channel != 0
	})
	relay := func(from, to int, procs ...*replicaProc) {
		t.Helper()
		for i := from; i < to; i++ {
			tg.SendText(chat, user, fmt.Sprintf("in-%02d", i))
			body := map[string]string{"body": fmt.Sprintf("out-%02d", i)}
			if st, err := procs[i%len(procs)].api(token, "POST", fmt.Sprintf("/channels/%d/messages", channel), body, nil); err != nil || st != http.StatusCreated {
				t.Fatalf("post out-%02d: %d, %v", i, st, err)
			}
		}
		checkOnce(t, g, tg, from, to)
	}
	relay(0, 20, p1, p2)
	p1.kill()
	killed := time.Now()
	waitBridge(t, p2, token, telegram.StateRunning)
	t.Logf("the standby ran the bridge %v after the leader's SIGKILL", time.Since(killed).Round(10*time.Millisecond))
	relay(20, 30, p2)
	if n := tg.MaxPollers(); n != 1 {
		t.Fatalf("%d getUpdates requests were held at once, want 1", n)
	}
}

// waitBridge waits until p's bridge reports state.
func waitBridge(t *testing.T, p *replicaProc, token, state string) {
	t.Helper()
	var st view.TelegramStatus
	waitFor(t, "bridge state "+state, func() bool {
		code, err := p.api(token, "GET", "/telegram", nil, &st)
		return err == nil && code == http.StatusOK && st.State == state
	})
}

// checkOnce waits until in-<i> is stored and out-<i> was sent for every i
// in [from, to), then checks each happened exactly once.
func checkOnce(t *testing.T, g *gorm.DB, tg *tgtest.Server, from, to int) {
	t.Helper()
	counts := func() (map[string]int, map[string]int) {
		var rows []struct {
			Body string
			N    int
		}
		g.Raw("SELECT body, COUNT(*) AS n FROM messages WHERE source = 'telegram' GROUP BY body").Scan(&rows)
		in := map[string]int{}
		for _, r := range rows {
			in[r.Body] = r.N
		}
		out := map[string]int{}
		for _, s := range tg.Sent() {
			for i := from; i < to; i++ {
				if k := fmt.Sprintf("out-%02d", i); strings.Contains(s.Plain, k) {
					out[k]++
				}
			}
		}
		return in, out
	}
	waitFor(t, "every message through", func() bool {
		in, out := counts()
		for i := from; i < to; i++ {
			if in[fmt.Sprintf("in-%02d", i)] == 0 || out[fmt.Sprintf("out-%02d", i)] == 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(500 * time.Millisecond) // room for a second copy to show
	in, out := counts()
	for i := from; i < to; i++ {
		if n := in[fmt.Sprintf("in-%02d", i)]; n != 1 {
			t.Errorf("Telegram message in-%02d stored %d times, want 1", i, n)
		}
		if n := out[fmt.Sprintf("out-%02d", i)]; n != 1 {
			t.Errorf("office message out-%02d sent %d times, want 1", i, n)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
