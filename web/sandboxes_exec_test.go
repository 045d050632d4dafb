package web_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/gorilla/websocket"
)

// Streamed exec: stdout and stderr apart, offsets that add up, binary
// output as base64, stdin, env, workdir, exit codes, timeouts; and the
// same output live on the websocket as ephemeral events.
func TestSandboxExecStream(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.Token, map[string]any{})
	ws := s.dial(s.Token, "")
	defer ws.Close()

	r := s.exec(s.Token, sb.ID, map[string]any{
		"cmd": []string{"/bin/sh", "-c", `echo out-1; echo err-1 >&2; sleep 0.2; echo "$FOO in $(pwd)"; printf 'bin\377\376' >&2; exit 3`},
		"env": map[string]string{"FOO": "bar"}, "workdir": "/tmp",
	})
	if string(r.Stdout) != "out-1\nbar in /tmp\n" || string(r.Stderr) != "err-1\nbin\xff\xfe" {
		t.Errorf("stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	if r.ExecID == "" || *r.End.ExitCode != 3 || r.End.TimedOut || r.End.DurationMS < 200 {
		t.Errorf("end %+v exec id %q", r.End, r.ExecID)
	}

	// The live log got the same bytes, tagged with the exec id.
	live := map[string][]byte{}
	ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	for len(live["stdout"]) < len(r.Stdout) || len(live["stderr"]) < len(r.Stderr) {
		var f frame
		if err := ws.ReadJSON(&f); err != nil {
			t.Fatalf("live output: %v (have %q)", err, live)
		}
		for _, ev := range f.Events {
			if ev.Type != "sandbox.output" {
				continue
			}
			if ev.Seq != 0 {
				t.Errorf("output event stored with seq %d", ev.Seq)
			}
			var p struct {
				ExecID  string `json:"exec_id"`
				Stream  string `json:"stream"`
				Data    string `json:"data"`
				DataB64 []byte `json:"data_b64"`
			}
			json.Unmarshal(ev.Payload, &p)
			if p.ExecID == r.ExecID {
				live[p.Stream] = append(append(live[p.Stream], p.Data...), p.DataB64...)
			}
		}
	}
	if !bytes.Equal(live["stdout"], r.Stdout) || !bytes.Equal(live["stderr"], r.Stderr) {
		t.Errorf("live output %q, want %q / %q", live, r.Stdout, r.Stderr)
	}

	// stdin, and a multi-byte character split across writes stays text.
	r = s.exec(s.Token, sb.ID, map[string]any{"cmd": "cat; printf '\\342\\202'; sleep 0.1; printf '\\254\\n'", "stdin": "from stdin\n"})
	if string(r.Stdout) != "from stdin\n€\n" || *r.End.ExitCode != 0 {
		t.Errorf("stdin: %q %+v", r.Stdout, r.End)
	}
	r = s.exec(s.Token, sb.ID, map[string]any{"cmd": []string{"cat"}, "stdin_b64": []byte{0, 1, 2, 255}})
	if !bytes.Equal(r.Stdout, []byte{0, 1, 2, 255}) {
		t.Errorf("binary stdin: %v", r.Stdout)
	}
	// A per-command timeout kills it.
	start := time.Now()
	r = s.exec(s.Token, sb.ID, map[string]any{"cmd": "echo started; sleep 30", "timeout_ms": 300})
	if !r.End.TimedOut || *r.End.ExitCode == 0 || time.Since(start) > 10*time.Second || string(r.Stdout) != "started\n" {
		t.Errorf("timeout: %+v after %v, out %q", r.End, time.Since(start), r.Stdout)
	}
	// Large output streams completely.
	r = s.exec(s.Token, sb.ID, map[string]any{"cmd": "head -c 5000000 /dev/zero | tr '\\0' a"})
	if len(r.Stdout) != 5000000 || r.Lines < 3 {
		t.Errorf("large output: %d bytes in %d lines", len(r.Stdout), r.Lines)
	}
	// Unknown commands and stopped sandboxes are errors before the stream.
	var e apiError
	st := s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/exec", s.Token, map[string]any{"cmd": []string{"/no/such/binary"}}, &e)
	wantError(t, "exec a missing binary", st, e, 400, bullpen.EINVALID)
	st = s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/exec", s.Token, map[string]any{"cmd": []string{}}, &e)
	wantError(t, "empty command", st, e, 400, bullpen.EINVALID)
	st = s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/exec", s.Token, map[string]any{"cmd": "true", "timeout_ms": -1}, &e)
	wantError(t, "negative timeout", st, e, 400, bullpen.EINVALID)
	st = s.do("POST", "/api/v1/sandboxes/nope/exec", s.Token, map[string]any{"cmd": "true"}, &e)
	wantError(t, "unknown sandbox", st, e, 404, bullpen.ENOTFOUND)
}

// The client going away kills the command.
func TestSandboxExecClientGone(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.Token, map[string]any{})
	resp := s.req("POST", "/api/v1/sandboxes/"+sb.ID+"/exec", s.Token,
		strings.NewReader(`{"cmd":"while true; do echo tick; sleep 0.05; done"}`), "application/json")
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	// The loop's shell shows in ps, and for a moment also its child
	// forked to run sleep, before that child becomes sleep: 1 or 2.
	const count = "ps -eo args | grep -c '[w]hile true' || true"
	if out, _ := s.run(s.Token, sb.ID, count); strings.TrimSpace(out) != "1" && strings.TrimSpace(out) != "2" {
		t.Fatalf("the command does not show in ps: %q", out)
	}
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _ := s.run(s.Token, sb.ID, count)
		if strings.TrimSpace(out) == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command still runs after the client left: %q", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Run returns everything at once; non-UTF-8 output comes as base64.
func TestSandboxRun(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.Token, map[string]any{})
	var out struct {
		Stdout    string `json:"stdout"`
		Stderr    string `json:"stderr"`
		StderrB64 []byte `json:"stderr_b64"`
		ExitCode  int    `json:"exit_code"`
		TimedOut  bool   `json:"timed_out"`
	}
	st := s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/run", s.Token, map[string]any{"cmd": []string{"sh", "-c", "echo hello; echo oops >&2; exit 7"}}, &out)
	if st != 200 || out.Stdout != "hello\n" || out.Stderr != "oops\n" || out.ExitCode != 7 {
		t.Errorf("run = %d %+v", st, out)
	}
	out.Stderr = ""
	s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/run", s.Token, map[string]any{"cmd": "printf '\\377' >&2"}, &out)
	if !bytes.Equal(out.StderrB64, []byte{0xff}) || out.Stderr != "" {
		t.Errorf("binary stderr: %+v", out)
	}
	s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/run", s.Token, map[string]any{"cmd": "sleep 10", "timeout_ms": 200}, &out)
	if !out.TimedOut {
		t.Errorf("run timeout: %+v", out)
	}
}

// The websocket variant: stdin typed interactively, then EOF.
func TestSandboxExecWebsocket(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.Token, map[string]any{})
	h := http.Header{"Authorization": {"Bearer " + s.Token}}
	url := strings.Replace(s.URL, "http", "ws", 1) + "/api/v1/sandboxes/" + sb.ID + "/exec/ws"
	c, _, err := websocket.DefaultDialer.Dial(url, h)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	c.WriteJSON(map[string]any{"cmd": []string{"sh", "-c", "while read l; do echo \"got $l\"; done; echo bye >&2"}})
	var l execLine
	if err := c.ReadJSON(&l); err != nil || l.ExecID == "" {
		t.Fatalf("first message %+v %v", l, err)
	}
	c.WriteJSON(map[string]any{"stdin": "one\n"})
	if err := c.ReadJSON(&l); err != nil || l.Data == nil || *l.Data != "got one\n" {
		t.Fatalf("echo of one: %+v %v", l, err)
	}
	c.WriteJSON(map[string]any{"stdin": "two\n", "eof": true})
	var out, errOut string
	for {
		l = execLine{}
		if err := c.ReadJSON(&l); err != nil {
			t.Fatalf("read: %v (out %q)", err, out)
		}
		if l.ExitCode != nil {
			break
		}
		if l.Stream == "stderr" {
			errOut += *l.Data
		} else if l.Data != nil {
			out += *l.Data
		}
	}
	if out != "got two\n" || errOut != "bye\n" || *l.ExitCode != 0 {
		t.Errorf("out %q err %q end %+v", out, errOut, l)
	}
	// A bad first message is an error message, then the socket closes.
	c2, _, err := websocket.DefaultDialer.Dial(url, h)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.WriteJSON(map[string]any{"cmd": 42})
	c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	l = execLine{}
	if err := c2.ReadJSON(&l); err != nil || l.Error == nil || l.Error.Code != bullpen.EINVALID {
		t.Errorf("bad first message: %+v %v", l, err)
	}
}

// TestSandboxExecWebsocketPTY: with "pty" the command runs on a terminal
// of that size (a program sees a TTY: raw keys reach it, and stty reports
// the size), a resize message changes the size while it runs, and a bad
// size or a resize of a command without a PTY is a clear error that
// changes nothing.
func TestSandboxExecWebsocketPTY(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.Token, map[string]any{})
	h := http.Header{"Authorization": {"Bearer " + s.Token}}
	url := strings.Replace(s.URL, "http", "ws", 1) + "/api/v1/sandboxes/" + sb.ID + "/exec/ws"
	dial := func() *websocket.Conn {
		c, _, err := websocket.DefaultDialer.Dial(url, h)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		return c
	}
	// readUntil reads output until it contains want.
	readUntil := func(c *websocket.Conn, want string) string {
		t.Helper()
		var out string
		for !strings.Contains(out, want) {
			var l execLine
			if err := c.ReadJSON(&l); err != nil {
				t.Fatalf("read: %v (output so far %q, want %q)", err, out, want)
			}
			if l.Error != nil {
				t.Fatalf("error: %+v (output %q)", l.Error, out)
			}
			if l.Data != nil {
				out += *l.Data
			}
			if l.ExitCode != nil && !strings.Contains(out, want) {
				t.Fatalf("ended (exit %d) before %q; output %q", *l.ExitCode, want, out)
			}
		}
		return out
	}
	c := dial()
	// The shell reads a key without Enter only on a terminal in raw mode.
	c.WriteJSON(map[string]any{"cmd": []string{"sh", "-c",
		`test -t 0 && echo TTY; stty size; stty raw -echo; k=$(dd bs=1 count=1 2>/dev/null); stty sane; echo "KEY[$k]"; read l; stty size; echo done`},
		"pty": map[string]int{"rows": 30, "cols": 100}})
	readUntil(c, "30 100")
	c.WriteJSON(map[string]any{"stdin": "x"}) // one key, no newline
	readUntil(c, "KEY[x]")
	c.WriteJSON(map[string]any{"resize": map[string]int{"rows": 40, "cols": 120}})
	c.WriteJSON(map[string]any{"stdin": "\r"}) // messages are handled in order: the resize first
	readUntil(c, "40 120")
	// The exec history shows the command asked for, not script(1)'s wrapper.
	page, _ := s.execsOf(s.Token, sb.ID, "")
	shown := false
	for _, e := range page.Items {
		if strings.Contains(e.Command, "script") {
			t.Errorf("the history shows the PTY's wrapper: %q", e.Command)
		}
		shown = shown || strings.Contains(e.Command, "test -t 0 && echo TTY")
	}
	if !shown {
		t.Errorf("the PTY's command is not in the history: %+v", page.Items)
	}

	// Bad sizes: refused before anything runs.
	for _, bad := range []map[string]int{{"rows": 0, "cols": 80}, {"rows": 24, "cols": 5000}} {
		c := dial()
		c.WriteJSON(map[string]any{"cmd": []string{"true"}, "pty": bad})
		var l execLine
		if err := c.ReadJSON(&l); err != nil || l.Error == nil || l.Error.Code != bullpen.EINVALID || !strings.Contains(l.Error.Message, "pty size") {
			t.Fatalf("pty %v: %+v %v", bad, l, err)
		}
	}
	// A resize of a command without a PTY: an error, and the command runs on.
	c = dial()
	c.WriteJSON(map[string]any{"cmd": []string{"sh", "-c", "read l; echo still $l"}})
	var first execLine
	if err := c.ReadJSON(&first); err != nil || first.ExecID == "" {
		t.Fatalf("first message %+v %v", first, err)
	}
	c.WriteJSON(map[string]any{"resize": map[string]int{"rows": 40, "cols": 120}})
	var l execLine
	if err := c.ReadJSON(&l); err != nil || l.Error == nil || !strings.Contains(l.Error.Message, "no PTY") {
		t.Fatalf("resize without a PTY: %+v %v", l, err)
	}
	c.WriteJSON(map[string]any{"stdin": "here\n"})
	readUntil(c, "still here")
}
