package kube

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// TestExecPTY: a command started with a PTY runs on a terminal the
// helper made (no script(1)), of the size asked, as its controlling
// terminal; what is typed reaches it; a resize changes the size it
// reads. A bad size is refused before anything runs.
func TestExecPTY(t *testing.T) {
	f := newFake(t)
	ctx := context.Background()
	in, err := f.d.Create(ctx, sandbox.Spec{Image: "host", Workdir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	p, err := f.d.Exec(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c",
		`echo "size $(stty size) tty $(tty) fg $(ps -o stat= -p $$ 2>/dev/null)"; read x; echo "got $x"; read y; echo "now $(stty size)"`},
		PTY: &sandbox.PTYSize{Rows: 24, Cols: 80}, Stdin: stdinR})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out := bufio.NewReader(p.Stdout())
	expect := func(want string) string {
		t.Helper()
		done := make(chan string, 1)
		go func() {
			var seen strings.Builder
			for {
				line, err := out.ReadString('\n')
				seen.WriteString(line)
				if strings.Contains(line, want) || err != nil {
					done <- seen.String()
					return
				}
			}
		}()
		select {
		case s := <-done:
			if !strings.Contains(s, want) {
				t.Fatalf("the terminal showed %q, want %q", s, want)
			}
			return s
		case <-time.After(20 * time.Second):
			t.Fatalf("no %q on the terminal", want)
		}
		return ""
	}
	if s := expect("size 24 80"); !strings.Contains(s, "tty /dev/pts/") {
		t.Fatalf("the command has no terminal: %q", s)
	}
	stdinW.Write([]byte("hello\n"))
	expect("got hello")
	if ok, err := p.ResizePTY(40, 100); !ok || err != nil {
		t.Fatalf("ResizePTY = %v, %v", ok, err)
	}
	if ok, err := p.ResizePTY(0, 100); !ok || bullpen.ErrorCode(err) != bullpen.EINVALID {
		t.Fatalf("ResizePTY(0, 100) = %v, %v; want invalid", ok, err)
	}
	stdinW.Write([]byte("\n"))
	expect("now 40 100")
	stdinW.Close() // the fake's exec (os/exec) waits for its stdin's end
	if res, err := p.Wait(); err != nil || res.Code != 0 {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
	if _, err := f.d.Exec(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"sh"}, PTY: &sandbox.PTYSize{Rows: 0, Cols: 80}}); bullpen.ErrorCode(err) != bullpen.EINVALID {
		t.Fatalf("a PTY of 0 rows: %v, want invalid", err)
	}
	plain, err := f.d.Exec(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := plain.ResizePTY(10, 10); ok {
		t.Fatal("a command without a PTY offers a resize")
	}
	plain.Wait()
}
