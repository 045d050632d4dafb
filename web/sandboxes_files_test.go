package web_test

import (
	"bytes"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web"
)

// patternReader yields n deterministic pseudo-random bytes without holding
// them: the test never has the whole file in memory either.
type patternReader struct {
	rng  *rand.ChaCha8
	left int64
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	p.rng.Read(b)
	p.left -= int64(len(b))
	return len(b), nil
}

func newPattern(n int64) *patternReader {
	return &patternReader{rng: rand.NewChaCha8([32]byte{1, 2, 3}), left: n}
}

// heapWatcher records the largest heap in use while a transfer runs.
func heapPeak(stop chan struct{}) chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		var peak uint64
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				out <- peak
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	return out
}

// 100 MB up and down through HTTP, streamed both ways: the server's heap
// stays far below the file's size.
func TestSandboxFiles100MB(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.Token, map[string]any{})
	const size = 100 << 20
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse

	up := sha256.New()
	stop := make(chan struct{})
	peakc := heapPeak(stop)
	req, _ := http.NewRequest("PUT", s.URL+"/api/v1/sandboxes/"+sb.ID+"/files?path=big.bin&mode=0600", io.TeeReader(newPattern(size), up))
	req.ContentLength = size
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	close(stop)
	if peak := <-peakc; peak > base+40<<20 {
		t.Errorf("heap grew by %d MiB during a 100 MiB upload", (peak-base)>>20)
	}
	if resp.StatusCode != 201 || !strings.Contains(body, `"size":104857600`) || !strings.Contains(body, `"mode":384`) {
		t.Fatalf("upload = %d %s", resp.StatusCode, body)
	}
	if out, _ := s.run(s.Token, sb.ID, "sha256sum big.bin | cut -c1-64"); strings.TrimSpace(out) != hexOf(up.Sum(nil)) {
		t.Errorf("checksum inside %q, want %s", out, hexOf(up.Sum(nil)))
	}

	stop = make(chan struct{})
	peakc = heapPeak(stop)
	resp = s.req("GET", "/api/v1/sandboxes/"+sb.ID+"/files?path=/home/sandbox/big.bin", s.Token, nil, "")
	down := sha256.New()
	n, err := io.Copy(down, resp.Body)
	resp.Body.Close()
	close(stop)
	if peak := <-peakc; peak > base+40<<20 {
		t.Errorf("heap grew by %d MiB during a 100 MiB download", (peak-base)>>20)
	}
	if err != nil || n != size || resp.ContentLength != size || !bytes.Equal(down.Sum(nil), up.Sum(nil)) {
		t.Errorf("download: %d bytes (Content-Length %d), %v, checksum match %v", n, resp.ContentLength, err, bytes.Equal(down.Sum(nil), up.Sum(nil)))
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("download Content-Type %q", ct)
	}
}

// list, stat, mkdir, rename, remove (recursive), and bad paths.
func TestSandboxFileOps(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.Token, map[string]any{})
	base := "/api/v1/sandboxes/" + sb.ID + "/files"
	put := func(path, body string) int {
		resp := s.req("PUT", base+"?path="+path, s.Token, strings.NewReader(body), "application/octet-stream")
		resp.Body.Close()
		return resp.StatusCode
	}
	type fi struct {
		Name  string `json:"name"`
		Path  string `json:"path"`
		Size  int64  `json:"size"`
		IsDir bool   `json:"is_dir"`
	}
	var info fi
	if st := s.do("POST", base+"/mkdir", s.Token, map[string]any{"path": "a/b/c", "parents": true}, &info); st != 201 || !info.IsDir || info.Path != "/home/sandbox/a/b/c" {
		t.Fatalf("mkdir = %d %+v", st, info)
	}
	if st := put("a/b/c/note.txt", "hello file"); st != 201 {
		t.Fatalf("put = %d", st)
	}
	var page struct{ Items []fi }
	if st := s.do("GET", base+"/list?path=a/b/c", s.Token, nil, &page); st != 200 || len(page.Items) != 1 || page.Items[0].Name != "note.txt" || page.Items[0].Size != 10 {
		t.Errorf("list = %d %+v", st, page.Items)
	}
	if st := s.do("GET", base+"/stat?path=a/b/c/note.txt", s.Token, nil, &info); st != 200 || info.Size != 10 {
		t.Errorf("stat = %d %+v", st, info)
	}
	if st := s.do("POST", base+"/rename", s.Token, map[string]any{"from": "a/b/c/note.txt", "to": "a/moved.txt"}, &info); st != 200 || info.Path != "/home/sandbox/a/moved.txt" {
		t.Errorf("rename = %d %+v", st, info)
	}
	if got := readAll(t, s.req("GET", base+"?path=a/moved.txt", s.Token, nil, "")); got != "hello file" {
		t.Errorf("read after rename: %q", got)
	}
	var e apiError
	st := s.do("DELETE", base+"?path=a", s.Token, nil, &e)
	if st == 204 {
		t.Errorf("removing a non-empty directory without recursive succeeded")
	}
	if st := s.do("DELETE", base+"?path=a&recursive=true", s.Token, nil, nil); st != 204 {
		t.Errorf("recursive remove = %d", st)
	}
	if st := s.do("GET", base+"/stat?path=a", s.Token, nil, &e); st != 404 {
		t.Errorf("stat after remove = %d", st)
	}

	// Paths stay inside: ".." and absolute paths resolve in the sandbox.
	if got := readAll(t, s.req("GET", base+"?path=../../../../etc/passwd", s.Token, nil, "")); !strings.Contains(got, "sandbox:x:1000") {
		t.Errorf("../../etc/passwd gave %q", got)
	}
	s.run(s.Token, sb.ID, "ln -s /etc/shadow /home/sandbox/shadow; ln -s / /home/sandbox/root")
	for _, p := range []string{"shadow", "root/etc/shadow", "/etc/shadow"} {
		resp := s.req("GET", base+"?path="+p, s.Token, nil, "")
		if got := readAll(t, resp); resp.StatusCode == 200 && strings.Contains(got, "root:") {
			t.Errorf("read %s through a symlink reached the host: %q", p, got)
		}
	}

	bad := []struct {
		name, method, path string
		status             int
		code               string
	}{
		{"no path", "GET", base, 400, bullpen.EINVALID},
		{"NUL in path", "GET", base + "?path=a%00b", 400, bullpen.EINVALID},
		{"missing file", "GET", base + "?path=nope.txt", 404, bullpen.ENOTFOUND},
		{"read a directory", "GET", base + "?path=/home", 400, bullpen.EINVALID},
		{"write on the host's /usr", "PUT", base + "?path=/usr/bin/evil", 400, bullpen.EINVALID},
		{"bad mode", "PUT", base + "?path=x&mode=999", 400, bullpen.EINVALID},
		{"mode with setuid", "PUT", base + "?path=x&mode=4755", 400, bullpen.EINVALID},
		{"parent missing", "PUT", base + "?path=no/such/dir/x", 404, bullpen.ENOTFOUND},
		{"list a file", "GET", base + "/list?path=/etc/passwd", 400, bullpen.EINVALID},
		{"remove missing", "DELETE", base + "?path=ghost", 404, bullpen.ENOTFOUND},
	}
	for _, b := range bad {
		resp := s.req(b.method, b.path, s.Token, strings.NewReader("data"), "")
		got := readAll(t, resp)
		if resp.StatusCode != b.status || !strings.Contains(got, `"code":"`+b.code+`"`) {
			t.Errorf("%s: %s %s = %d %s, want %d %s", b.name, b.method, b.path, resp.StatusCode, got, b.status, b.code)
		}
	}
	st = s.do("POST", base+"/mkdir", s.Token, map[string]any{"path": ""}, &e)
	wantError(t, "mkdir with no path", st, e, 400, bullpen.EINVALID)
	st = s.do("POST", base+"/mkdir", s.Token, map[string]any{"path": strings.Repeat("a/", 2500)}, &e)
	wantError(t, "mkdir with a huge path", st, e, 400, bullpen.EINVALID)
	st = s.do("POST", base+"/rename", s.Token, map[string]any{"from": "ghost", "to": "x"}, &e)
	wantError(t, "rename a missing file", st, e, 404, bullpen.ENOTFOUND)
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}
