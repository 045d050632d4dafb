package kube_test

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
)

// TestClusterPTY: on the real cluster, in an image without script(1), a
// PTY command runs on a terminal of the size asked, reads what is typed,
// and sees a resize.
func TestClusterPTY(t *testing.T) {
	d, _ := clusterDriver(t)
	ctx := context.Background()
	in, err := d.Create(ctx, sandbox.Spec{Image: "host"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := d.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "command -v script || echo none"}}); err != nil || strings.TrimSpace(string(r.Stdout)) != "none" {
		t.Fatalf("the test image has script(1) (%q, %v): this test needs an image without it", r.Stdout, err)
	}
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	p, err := d.Exec(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c",
		`echo "size $(stty size) tty $(tty)"; read x; echo "got $x"; read y; echo "now $(stty size)"`},
		PTY: &sandbox.PTYSize{Rows: 30, Cols: 90}, Stdin: stdinR})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	lines := make(chan string, 64)
	go func() {
		br := bufio.NewReader(p.Stdout())
		for {
			l, err := br.ReadString('\n')
			lines <- l
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	expect := func(want string) {
		t.Helper()
		var seen strings.Builder
		timeout := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				seen.WriteString(l)
				if strings.Contains(l, want) {
					return
				}
				if !ok {
					t.Fatalf("the terminal showed %q, want %q", seen.String(), want)
				}
			case <-timeout:
				t.Fatalf("the terminal showed %q, want %q", seen.String(), want)
			}
		}
	}
	expect("size 30 90 tty /dev/pts/")
	stdinW.Write([]byte("typed\n"))
	expect("got typed")
	if ok, err := p.ResizePTY(50, 120); !ok || err != nil {
		t.Fatalf("ResizePTY = %v, %v", ok, err)
	}
	stdinW.Write([]byte("\n"))
	expect("now 50 120")
	if res, err := p.Wait(); err != nil || res.Code != 0 {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
}
