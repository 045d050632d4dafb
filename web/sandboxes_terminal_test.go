package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/gorilla/websocket"
)

// terminalShell is what the dashboard's terminal asks for (terminal.js).
var terminalShell = []string{"/bin/sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi"}

// A terminal session in the exec history: one entry for the shell asked
// for (resizes add none), ended (not killed) when its user closes it, and
// its output kept as the screen's text, without escape codes. A PTY
// command killed by a kill message, and a command without a PTY whose
// client went away, still show as killed.
func TestTerminalSessionHistory(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.Token, map[string]any{})
	h := http.Header{"Authorization": {"Bearer " + s.Token}}
	url := strings.Replace(s.URL, "http", "ws", 1) + "/api/v1/sandboxes/" + sb.ID + "/exec/ws"
	dial := func(first map[string]any) (*websocket.Conn, string) {
		t.Helper()
		c, _, err := websocket.DefaultDialer.Dial(url, h)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		c.WriteJSON(first)
		var l execLine
		if err := c.ReadJSON(&l); err != nil || l.ExecID == "" {
			t.Fatalf("first message %+v %v", l, err)
		}
		return c, l.ExecID
	}
	readUntil := func(c *websocket.Conn, want string) string {
		t.Helper()
		var out string
		for !strings.Contains(out, want) {
			var l execLine
			if err := c.ReadJSON(&l); err != nil {
				t.Fatalf("read: %v (output so far %q, want %q)", err, out, want)
			}
			if l.Error != nil || l.ExitCode != nil {
				t.Fatalf("ended before %q: %+v (output %q)", want, l, out)
			}
			if l.Data != nil {
				out += *l.Data
			}
		}
		return out
	}
	entryOf := func(execID string) bullpen.SandboxExecEntry {
		t.Helper()
		var e bullpen.SandboxExecEntry
		waitUntil(t, func() bool {
			page, _ := s.execsOf(s.Token, sb.ID, "")
			for _, x := range page.Items {
				if x.ID == execID && !x.Running {
					e = x
					return true
				}
			}
			return false
		})
		return e
	}

	c, term := dial(map[string]any{"cmd": terminalShell, "env": map[string]string{"TERM": "xterm-256color"}, "pty": map[string]int{"rows": 24, "cols": 80}})
	c.WriteJSON(map[string]any{"stdin": "printf 'in \\033[31mred\\033[0m and \\033]0;a title\\007plain\\n'; echo done-$((6*7))\r"})
	raw := readUntil(c, "done-42")
	if !strings.Contains(raw, "\x1b[31m") {
		t.Fatalf("the live terminal lost its escape codes: %q", raw)
	}
	for _, sz := range [][2]int{{30, 100}, {31, 101}, {40, 120}} {
		c.WriteJSON(map[string]any{"resize": map[string]int{"rows": sz[0], "cols": sz[1]}})
	}
	c.WriteJSON(map[string]any{"stdin": "stty size\r"}) // read after the resizes, which run first
	readUntil(c, "40 120")
	c.Close() // the user closes the terminal

	e := entryOf(term)
	if !e.Ended || !e.PTY {
		t.Errorf("closed terminal: ended %v pty %v (exit %v, signal %q), want an ended terminal session", e.Ended, e.PTY, e.ExitCode, e.Signal)
	}
	if !strings.Contains(e.Command, "exec bash -l") || strings.Contains(e.Command, "script") {
		t.Errorf("the history's command is %q, want the shell asked for", e.Command)
	}
	if strings.ContainsAny(e.Stdout, "\x1b\r\a") || !strings.Contains(e.Stdout, "in red and plain\n") || !strings.Contains(e.Stdout, "\ndone-42\n") ||
		!strings.Contains(e.Stdout, "\n40 120\n") {
		t.Errorf("the session's kept output is not its screen's text: %q", e.Stdout)
	}
	page, _ := s.execsOf(s.Token, sb.ID, "")
	if len(page.Items) != 1 {
		var cmds []string
		for _, x := range page.Items {
			cmds = append(cmds, x.Command)
		}
		t.Errorf("the history has %d entries, want the session only (no resizes): %q", len(page.Items), cmds)
	}

	// Killed by a kill message: killed, not ended, even on a PTY.
	c, killed := dial(map[string]any{"cmd": []string{"sh", "-c", "echo up; sleep 300"}, "pty": map[string]int{"rows": 24, "cols": 80}})
	readUntil(c, "up")
	c.WriteJSON(map[string]any{"kill": true})
	if e := entryOf(killed); e.Ended || e.Signal == "" {
		t.Errorf("a PTY command killed: ended %v signal %q, want killed", e.Ended, e.Signal)
	}
	// No PTY, the client gone: killed, not ended.
	c, gone := dial(map[string]any{"cmd": []string{"sh", "-c", "echo up; sleep 300"}})
	readUntil(c, "up")
	c.Close()
	if e := entryOf(gone); e.Ended || e.Signal == "" || e.PTY {
		t.Errorf("a command whose client left: ended %v signal %q pty %v, want killed", e.Ended, e.Signal, e.PTY)
	}
	// An argument's quoting survives into the history.
	r := s.exec(s.Token, sb.ID, map[string]any{"cmd": []string{"sh", "-c", `echo "$1"`, "sh", "a  b"}})
	if e := entryOf(r.ExecID); e.Command != `sh -c 'echo "$1"' sh 'a  b'` {
		t.Errorf("history command = %s, want the quoting kept", e.Command)
	}
}
