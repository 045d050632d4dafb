package cli

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSocketConnectionCap: connections past the agent's cap are answered
// 503 and closed at once; closing one gives its place back.
func TestSocketConnectionCap(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	_, path, _ := testSockets(t, h, Config{MaxConns: 3, ConnRate: 1000, ConnBurst: 1000})
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 3 {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	time.Sleep(50 * time.Millisecond) // the server accepted them
	if line := refusedLine(t, path); !strings.Contains(line, "503") {
		t.Fatalf("4th connection: %q, want a 503 and a close", line)
	}
	held[0].Close()
	time.Sleep(50 * time.Millisecond)
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte("GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n"))
	if line, _ := bufio.NewReader(c).ReadString('\n'); !strings.Contains(line, "401") {
		t.Errorf("a connection after one closed: %q, want served (401 without a token)", line)
	}
}

// TestSocketConnectionRate: past the burst, new connections are refused
// until the rate gives them room.
func TestSocketConnectionRate(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	_, path, _ := testSockets(t, h, Config{MaxConns: 100, ConnRate: 0.001, ConnBurst: 5})
	served, refused := 0, 0
	for range 20 {
		if strings.Contains(refusedLine(t, path), "503") {
			refused++
		} else {
			served++
		}
	}
	if served != 5 || refused != 15 {
		t.Errorf("20 connections at once with a burst of 5: %d served, %d refused", served, refused)
	}
}

// refusedLine opens a connection, sends a request and returns the first
// line of the answer.
func refusedLine(t *testing.T, path string) string {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte("GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n"))
	line, _ := bufio.NewReader(c).ReadString('\n')
	return line
}
