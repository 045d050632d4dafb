package sandbox

import (
	"context"
	"crypto/sha256"
	"io"
	"strings"
	"testing"

	bullpen "github.com/bullpen-hq/bullpen"
)

// patternReader yields n deterministic bytes.
type patternReader struct{ n, off int64 }

func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	if int64(len(b)) > p.n-p.off {
		b = b[:p.n-p.off]
	}
	for i := range b {
		b[i] = byte((p.off + int64(i)) * 7 % 251)
	}
	p.off += int64(len(b))
	return len(b), nil
}

func TestFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id := e.create(Spec{}).ID
	m := e.m

	// 100 MB streamed both ways.
	const size = 100 << 20
	if err := m.WriteFile(ctx, id, "/home/sandbox/big.bin", &patternReader{n: size}, 0o640); err != nil {
		t.Fatal(err)
	}
	want := sha256.New()
	io.Copy(want, &patternReader{n: size})
	rc, err := m.ReadFile(ctx, id, "big.bin") // relative to the workdir
	if err != nil {
		t.Fatal(err)
	}
	got := sha256.New()
	n, _ := io.Copy(got, rc)
	rc.Close()
	if n != size || string(got.Sum(nil)) != string(want.Sum(nil)) {
		t.Fatalf("read back %d bytes, hash mismatch", n)
	}
	// Owned by the sandbox user, seen from inside.
	if out := e.sh(id, "stat -c '%U %a %s' /home/sandbox/big.bin; sha256sum big.bin | cut -c1-8"); !strings.HasPrefix(out, "sandbox 640 104857600\n") {
		t.Fatalf("inside view: %q", out)
	}
	// Mkdir, Stat, List, Rename, Remove.
	if err := m.Mkdir(ctx, id, "/home/sandbox/a/b/c", true); err != nil {
		t.Fatal(err)
	}
	if err := m.Mkdir(ctx, id, "/home/sandbox/a/b/c", true); err != nil {
		t.Fatalf("mkdir -p existing: %v", err)
	}
	wantCode(t, m.Mkdir(ctx, id, "/home/sandbox/a", false), bullpen.ECONFLICT)
	wantCode(t, m.Mkdir(ctx, id, "/home/sandbox/x/y", false), bullpen.ENOTFOUND)
	if err := m.WriteFile(ctx, id, "/home/sandbox/a/b/c/f.txt", strings.NewReader("hi"), 0); err != nil {
		t.Fatal(err)
	}
	e.sh(id, "ln -s /home/sandbox/a /home/sandbox/link")
	fi, err := m.Stat(ctx, id, "/home/sandbox/a/b/c/f.txt")
	if err != nil || fi.Size != 2 || fi.IsDir || fi.Mode.Perm() != 0o644 || fi.Name != "f.txt" {
		t.Fatalf("stat: %+v %v", fi, err)
	}
	if fi, _ := m.Stat(ctx, id, "/home/sandbox/link"); fi.LinkTarget != "/home/sandbox/a" {
		t.Fatalf("stat link: %+v", fi)
	}
	list, err := m.ListFiles(ctx, id, "/home/sandbox")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range list {
		names[f.Name] = f.IsDir
	}
	if len(names) != 3 || !names["a"] || names["big.bin"] {
		t.Fatalf("list: %+v", list)
	}
	if err := m.Rename(ctx, id, "/home/sandbox/a/b/c/f.txt", "/tmp/g.txt"); err != nil {
		t.Fatal(err)
	}
	if out := e.sh(id, "cat /tmp/g.txt; stat -c %U /home/sandbox/a/b"); out != "hisandbox\n" {
		t.Fatalf("after rename: %q", out)
	}
	wantCode(t, m.Remove(ctx, id, "/home/sandbox/a", false), bullpen.ECONFLICT)
	if err := m.Remove(ctx, id, "/home/sandbox/link", false); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(ctx, id, "/home/sandbox/a", true); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stat(ctx, id, "/home/sandbox/a"); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		t.Fatalf("after remove: %v", err)
	}
	wantCode(t, m.Remove(ctx, id, "/", true), bullpen.EINVALID)
	_, err = m.ReadFile(ctx, id, "/nope")
	wantCode(t, err, bullpen.ENOTFOUND)
	_, err = m.ReadFile(ctx, id, "/tmp")
	wantCode(t, err, bullpen.EINVALID)
	// A FIFO made by the sandbox must not hang the host.
	e.sh(id, "mkfifo /tmp/fifo")
	_, err = m.ReadFile(ctx, id, "/tmp/fifo")
	wantCode(t, err, bullpen.EINVALID)
	wantCode(t, m.WriteFile(ctx, id, "/tmp/fifo", strings.NewReader("x"), 0), bullpen.EINVALID)
	wantCode(t, m.WriteFile(ctx, id, "/usr/local/bin/x", strings.NewReader("x"), 0), bullpen.EINVALID)
	wantCode(t, m.Mkdir(ctx, id, "/bin/x", false), bullpen.EINVALID)
	_, err = m.ReadFile(ctx, "sb_0000000000000000", "/tmp")
	wantCode(t, err, bullpen.ENOTFOUND)
}

func TestSnapshotFallback(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	src := e.create(Spec{Secrets: []Secret{{Name: "K", Value: "topsecret", File: "/home/sandbox/.key"}}})
	e.sh(src.ID, "mkdir -p /home/sandbox/proj && echo v1 > /home/sandbox/proj/file && echo w > /home/sandbox/proj/gone && echo x > /tmp/t")
	ref, err := e.m.Snapshot(ctx, src.ID, "snap-one")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Snapshot(ctx, src.ID, "snap-one"); !bullpen.IsCode(err, bullpen.ECONFLICT) {
		t.Fatalf("snapshot name reuse: %v", err)
	}
	// The source keeps running.
	e.sh(src.ID, "true")
	dst := e.create(Spec{Image: ref})
	out := e.sh(dst.ID, "cat /home/sandbox/proj/file /tmp/t; test -e /home/sandbox/.key && echo LEAK; stat -c %U /home/sandbox/proj")
	if out != "v1\nx\nsandbox\n" {
		t.Fatalf("snapshot contents: %q", out)
	}
	// Snapshot of a snapshot stacks layers.
	e.sh(dst.ID, "echo v2 > /home/sandbox/proj/file2 && rm /home/sandbox/proj/gone")
	ref2, err := e.m.Snapshot(ctx, dst.ID, "snap-two")
	if err != nil {
		t.Fatal(err)
	}
	third := e.create(Spec{Image: ref2})
	if out := e.sh(third.ID, "cat /home/sandbox/proj/file /home/sandbox/proj/file2; ls /home/sandbox/proj"); out != "v1\nv2\nfile\nfile2\n" {
		t.Fatalf("stacked: %q", out)
	}
	_, err = e.m.Snapshot(ctx, src.ID, "bad/name")
	wantCode(t, err, bullpen.EINVALID)
}
