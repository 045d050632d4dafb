package web_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/web"
	"github.com/gorilla/websocket"
)

// maxIdleSubscriberKiB bounds what one idle event websocket costs.
const maxIdleSubscriberKiB = 64

// TestIdleSubscriberMemory: an idle event websocket costs at most
// maxIdleSubscriberKiB of the process's heap and stacks. Server and test
// clients share the process, so the figure holds the clients' share too:
// the server's alone is less. It prints fanout_idle_subscriber_kib.
func TestIdleSubscriberMemory(t *testing.T) {
	ts := newServer(t, web.Config{})
	const n = 200
	inUse := func() uint64 {
		var m runtime.MemStats
		for range 3 {
			runtime.GC()
		}
		runtime.ReadMemStats(&m)
		return m.HeapInuse + m.StackInuse
	}
	warm := ts.dial(ts.Token, "") // the first connection sets up pools
	defer warm.Close()
	time.Sleep(200 * time.Millisecond)
	before := inUse()
	conns := make([]*websocket.Conn, 0, n)
	for range n {
		conns = append(conns, ts.dial(ts.Token, ""))
	}
	deadline := time.Now().Add(10 * time.Second)
	for ts.Srv.WebsocketClients() != n+1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // every handler parked on its feed
	after := inUse()
	per := float64(int64(after)-int64(before)) / n / 1024
	t.Logf("%d idle subscribers: %.1f KiB each (heap and stacks, server and clients)", n, per)
	fmt.Printf("figure fanout_idle_subscriber_kib %.1f KiB\n", per)
	if per > maxIdleSubscriberKiB {
		t.Errorf("an idle subscriber costs %.1f KiB, want at most %d", per, maxIdleSubscriberKiB)
	}
	for _, c := range conns {
		c.Close()
	}
}
