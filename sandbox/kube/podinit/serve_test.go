package podinit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startServe runs "serve" as its own process (as PID 1 runs it) on a
// loopback port with token, and returns its address.
func startServe(t *testing.T, token string, env ...string) string {
	t.Helper()
	c := exec.Command(os.Args[0], "serve", "127.0.0.1:0")
	c.Env = append(append(os.Environ(), "PODINIT_MAIN=1", TokenEnv+"="+token), env...)
	errp, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Signal(syscall.SIGTERM); c.Wait() })
	br := bufio.NewReader(errp)
	line, err := br.ReadString('\n')
	for err == nil && strings.Contains(line, "bridge port") { // a bridge it could not open: not the address
		line, err = br.ReadString('\n')
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "bullpen-kube-init: serving on ")
	if err != nil || !ok {
		t.Fatalf("serve said %q, %v", line, err)
	}
	go io.Copy(io.Discard, br)
	return addr
}

func call(t *testing.T, ctx context.Context, addr, token string, stdin io.Reader, argv ...string) (string, string, int, error) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code, err := Call(ctx, conn, token, argv, stdin, &out, &errb)
	return out.String(), errb.String(), code, err
}

// TestServeRelay: stdin, stdout, stderr and the exit status go through
// serve; the command gets the extra environment but never the token.
func TestServeRelay(t *testing.T) {
	addr := startServe(t, "tok-relay")
	d := t.TempDir()
	o, e, code, err := call(t, context.Background(), addr, "tok-relay", strings.NewReader("from stdin"),
		"exec", "t1", d, "0", "X=1", "--", "sh", "-c", `cat; echo " $X [$`+TokenEnv+`] $(pwd)"; echo oops >&2; exit 7`)
	if want := "from stdin 1 [] " + d + "\n"; err != nil || o != want || e != "oops\n" || code != 7 {
		t.Errorf("exec = %q %q, %d, %v; want %q \"oops\\n\", 7", o, e, code, err, want)
	}
	if o, _, code, err := call(t, context.Background(), addr, "tok-relay", nil, "file", "stat", d); err != nil || code != 0 || !strings.Contains(o, `"is_dir":true`) {
		t.Errorf("file stat = %q, %d, %v", o, code, err)
	}
}

// TestServeRefuses: a request with no token, a wrong one, or one that is
// not a request at all, runs nothing; nor does a subcommand serve does
// not serve. The same command with the token does run (the control).
func TestServeRefuses(t *testing.T) {
	addr := startServe(t, "right-token")
	d := t.TempDir()
	marker := filepath.Join(d, "ran")
	touch := []string{"exec", "t", d, "0", "--", "touch", marker}
	for _, tok := range []string{"", "wrong-token", "right-toke", "right-token-and-more"} {
		if _, _, _, err := call(t, context.Background(), addr, tok, nil, touch...); !errors.Is(err, ErrRefused) {
			t.Errorf("token %q: %v, want refused", tok, err)
		}
	}
	if _, _, _, err := call(t, context.Background(), addr, "right-token", nil, "install", d); !errors.Is(err, ErrRefused) {
		t.Errorf("install through serve: %v, want refused", err)
	}
	// A refused request reads none of its stdin (so it can go elsewhere).
	in := strings.NewReader("unread")
	if _, _, _, err := call(t, context.Background(), addr, "wrong", in, touch...); !errors.Is(err, ErrRefused) || in.Len() != 6 {
		t.Errorf("a refused request: %v, stdin left %d bytes, want refused and 6", err, in.Len())
	}
	for _, raw := range [][]byte{[]byte("GET / HTTP/1.0\r\n\r\n"), appendFrame(nil, frameStdin, []byte("x")),
		{frameRequest, 0xff, 0, 0, 0}} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(raw)
		b, _ := io.ReadAll(conn)
		conn.Close()
		if len(b) == 0 || b[0] != frameRefused {
			t.Errorf("%q got %q, want a refusal", raw, b)
		}
	}
	time.Sleep(100 * time.Millisecond) // a touch that did run has long finished
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("a refused request ran: %v", err)
	}
	if _, e, code, err := call(t, context.Background(), addr, "right-token", nil, touch...); err != nil || code != 0 {
		t.Fatalf("control: %q, %d, %v", e, code, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the control did not run: %v", err)
	}
}

// TestServeDropKills: a client that goes away kills the command's whole
// process group (a background child too), and serve reaps them: no
// process and no zombie is left.
func TestServeDropKills(t *testing.T) {
	addr := startServe(t, "tok")
	d := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			done <- err
			return
		}
		_, err = Call(ctx, conn, "tok", []string{"exec", "drop", d, "0", "--", "sh", "-c", "sleep 300 & echo $! $$; wait"}, nil, pw, io.Discard)
		done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(line) {
		n, _ := strconv.Atoi(f)
		pids = append(pids, n)
	}
	if len(pids) != 2 || !alive(pids[0]) || !alive(pids[1]) {
		t.Fatalf("pids %q not running", line)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("Call of a cancelled request returned no error")
	}
	go io.Copy(io.Discard, pr)
	deadline := time.Now().Add(30 * time.Second)
	for alive(pids[0]) || alive(pids[1]) {
		if time.Now().After(deadline) {
			t.Fatalf("after the client went away, %v still exist (%s)", pids, procState(pids))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeCutUpload: an upload whose source fails once the helper has
// begun writing leaves neither the file nor its temporary file.
func TestServeCutUpload(t *testing.T) {
	addr := startServe(t, "tok")
	d := t.TempDir()
	src := io.MultiReader(io.LimitReader(rand.NewChaCha8([32]byte{1}), 1<<20), errReader{d})
	if _, _, _, err := call(t, context.Background(), addr, "tok", src, "file", "write", filepath.Join(d, "f"), "644"); err == nil {
		t.Error("a cut upload succeeded")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ents, _ := os.ReadDir(d)
		if len(ents) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a cut upload the directory holds %v", ents)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// errReader fails once the directory holds the helper's temporary file.
type errReader struct{ dir string }

func (e errReader) Read([]byte) (int, error) {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(e.dir, ".bullpen-write-*")); len(m) > 0 {
			break
		}
	}
	return 0, errors.New("the source broke")
}

// TestServeBigFile: 100 MB go in through stdin and come out through
// stdout identical.
func TestServeBigFile(t *testing.T) {
	addr := startServe(t, "tok")
	p := filepath.Join(t.TempDir(), "big")
	const size = 100 << 20
	hin, hout := sha256.New(), sha256.New()
	src := io.TeeReader(io.LimitReader(rand.NewChaCha8([32]byte{2}), size), hin)
	ctx := context.Background()
	if _, e, code, err := call(t, ctx, addr, "tok", src, "file", "write", p, "600"); err != nil || code != 0 {
		t.Fatalf("write: %q, %d, %v", e, code, err)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cw := &countWriter{w: hout}
	if code, err := Call(ctx, conn, "tok", []string{"file", "read", p}, nil, cw, io.Discard); err != nil || code != 0 || cw.n != size {
		t.Fatalf("read: %d bytes, exit %d, %v", cw.n, code, err)
	}
	if !bytes.Equal(hin.Sum(nil), hout.Sum(nil)) {
		t.Error("100 MB came back different")
	}
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return c.w.Write(p) }

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func procState(pids []int) string {
	var s []string
	for _, p := range pids {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		s = append(s, string(b))
	}
	return strings.Join(s, "; ")
}
