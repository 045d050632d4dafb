package image

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"golang.org/x/sys/unix"
)

func baseImage(t *testing.T, s *Store) {
	t.Helper()
	l := layerOf(t, file("a", "a"), dir("dir"), file("dir/b", "b"), file("dir/c", "c"))
	if _, err := s.ImportTarball(context.Background(), writeTarball(t, imageOf(t, []string{"A=1"}, "/dir", l)), "base"); err != nil {
		t.Fatal(err)
	}
}

// makeUpper builds an overlay upper directory by hand: a new owned file
// with an xattr, a whiteout, an opaque dir, hard links, a symlink and a
// device that must not end up in an image.
func makeUpper(t *testing.T) string {
	t.Helper()
	u := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(u, "new.txt"), []byte("fresh"), 0o640))
	must(os.Chown(filepath.Join(u, "new.txt"), 1000, 1000))
	must(unix.Lsetxattr(filepath.Join(u, "new.txt"), "user.note", []byte("hi"), 0))
	must(unix.Mknod(filepath.Join(u, "a"), unix.S_IFCHR, 0))
	must(os.Mkdir(filepath.Join(u, "dir"), 0o750))
	must(unix.Lsetxattr(filepath.Join(u, "dir"), "trusted.overlay.opaque", []byte("y"), 0))
	must(unix.Lsetxattr(filepath.Join(u, "dir"), "trusted.overlay.origin", []byte("xx"), 0))
	must(os.WriteFile(filepath.Join(u, "dir/d"), []byte("d"), 0o644))
	must(os.WriteFile(filepath.Join(u, "h1"), []byte("linked"), 0o644))
	must(os.Link(filepath.Join(u, "h1"), filepath.Join(u, "h2")))
	must(os.Symlink("new.txt", filepath.Join(u, "link")))
	must(os.Mkdir(filepath.Join(u, "dev"), 0o755))
	must(unix.Mknod(filepath.Join(u, "dev/tty"), unix.S_IFCHR|0o666, int(unix.Mkdev(5, 0))))
	return u
}

func checkCommitted(t *testing.T, l string) {
	t.Helper()
	if got := readFile(t, filepath.Join(l, "new.txt")); got != "fresh" {
		t.Fatalf("new.txt = %q", got)
	}
	st := stat(t, filepath.Join(l, "new.txt"))
	if st.Uid != 1000 || st.Gid != 1000 || st.Mode&0o7777 != 0o640 {
		t.Fatalf("new.txt uid %d gid %d mode %o", st.Uid, st.Gid, st.Mode&0o7777)
	}
	if got := xattr(filepath.Join(l, "new.txt"), "user.note"); got != "hi" {
		t.Fatalf("user.note = %q", got)
	}
	assertWhiteout(t, filepath.Join(l, "a"))
	d := filepath.Join(l, "dir")
	if xattr(d, xattrOpaque) != "y" || xattr(d, "trusted.overlay.origin") != "" {
		t.Fatalf("dir xattrs: opaque %q origin %q", xattr(d, xattrOpaque), xattr(d, "trusted.overlay.origin"))
	}
	if stat(t, d).Mode&0o7777 != 0o750 {
		t.Fatalf("dir mode %o", stat(t, d).Mode&0o7777)
	}
	if got := readFile(t, filepath.Join(l, "dir/d")); got != "d" {
		t.Fatalf("dir/d = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(l, "dir/.wh..wh..opq")); !os.IsNotExist(err) {
		t.Fatalf("opaque marker file left: %v", err)
	}
	if stat(t, filepath.Join(l, "h1")).Ino != stat(t, filepath.Join(l, "h2")).Ino {
		t.Fatal("h1 and h2 are not hard links")
	}
	if to, _ := os.Readlink(filepath.Join(l, "link")); to != "new.txt" {
		t.Fatalf("link -> %q", to)
	}
	if _, err := os.Lstat(filepath.Join(l, "dev/tty")); !os.IsNotExist(err) {
		t.Fatalf("device committed: %v", err)
	}
}

func TestCommitRoundTrip(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	baseImage(t, s)
	upper := makeUpper(t)
	id, err := s.Commit(ctx, "snap", "base", upper)
	if err != nil {
		t.Fatal(err)
	}
	layers, env, wd, err := s.Resolve(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	base := mustResolve(t, s, "base")
	if len(layers) != 2 || layers[0] != base[0] || !reflect.DeepEqual(env, []string{"A=1"}) || wd != "/dir" {
		t.Fatalf("layers %v env %v wd %q", layers, env, wd)
	}
	checkCommitted(t, layers[1])
	assertWhiteout(t, filepath.Join(upper, "a")) // the upper is left alone
	if b, _ := s.Base(ctx, "snap"); b != "" {
		t.Fatalf("Base = %q", b)
	}

	// Committing the same upper again gives the same layer: the tar is deterministic.
	if _, err := s.Commit(ctx, "snap-again", "base", upper); err != nil {
		t.Fatal(err)
	}
	if again := mustResolve(t, s, "snap-again"); again[1] != layers[1] {
		t.Fatalf("recommit made layer %s, want %s", again[1], layers[1])
	}

	// Export and import again: the committed layer re-tars to the same diff id.
	out := filepath.Join(t.TempDir(), "snap.tar")
	if err := s.Export(ctx, "snap", out); err != nil {
		t.Fatal(err)
	}
	img, err := s.ImportTarball(ctx, out, "snap2")
	if err != nil {
		t.Fatal(err)
	}
	back := mustResolve(t, s, "snap2")
	if len(back) != 2 || back[1] != layers[1] || !reflect.DeepEqual(img.Env, []string{"A=1"}) {
		t.Fatalf("re-imported layers %v (want top %s), env %v", back, layers[1], img.Env)
	}
	if got := readFile(t, filepath.Join(back[0], "dir/b")); got != "b" {
		t.Fatalf("re-imported base dir/b = %q", got)
	}
}

func TestCommitOnHost(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	id, err := s.Commit(ctx, "h1", BaseHost, makeUpper(t))
	if err != nil {
		t.Fatal(err)
	}
	layers, env, _, err := s.Resolve(ctx, "h1")
	if err != nil || len(layers) != 1 || env != nil {
		t.Fatalf("layers %v env %v, %v", layers, env, err)
	}
	checkCommitted(t, layers[0])
	upper2 := t.TempDir()
	os.WriteFile(filepath.Join(upper2, "more"), []byte("more"), 0o644)
	if _, err := s.Commit(ctx, "h2", id, upper2); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"h1", "h2"} {
		if b, err := s.Base(ctx, ref); err != nil || b != BaseHost {
			t.Fatalf("Base(%s) = %q, %v", ref, b, err)
		}
	}
	if got := mustResolve(t, s, "h2"); len(got) != 2 || got[0] != layers[0] {
		t.Fatalf("h2 layers %v", got)
	}
	out := filepath.Join(t.TempDir(), "h2.tar")
	if err := s.Export(ctx, "h2", out); err != nil {
		t.Fatal(err)
	}
	img, err := s.ImportTarball(ctx, out, "h3")
	if err != nil || img.Base != BaseHost || len(img.Layers) != 2 {
		t.Fatalf("re-imported h2 = %+v, %v", img, err)
	}
}

func TestCommitErrors(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	baseImage(t, s)
	_, err := s.Commit(ctx, "x", "nope", t.TempDir())
	wantCode(t, err, bullpen.ENOTFOUND)
	_, err = s.Commit(ctx, "x", "", t.TempDir())
	wantCode(t, err, bullpen.EINVALID)
	_, err = s.Commit(ctx, "bad name", "base", t.TempDir())
	wantCode(t, err, bullpen.EINVALID)
	_, err = s.Commit(ctx, "x", "base", filepath.Join(t.TempDir(), "missing"))
	wantCode(t, err, bullpen.ENOTFOUND)
	u := t.TempDir()
	os.Mkdir(filepath.Join(u, "moved"), 0o755)
	unix.Lsetxattr(filepath.Join(u, "moved"), "trusted.overlay.redirect", []byte("/orig"), 0)
	_, err = s.Commit(ctx, "x", "base", u)
	wantCode(t, err, bullpen.EUNSUPPORTED)
	if _, err := s.Get(ctx, "x"); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		t.Fatalf("failed commits recorded an image: %v", err)
	}
	if left := hiddenLeftovers(t, s); len(left) != 0 {
		t.Fatalf("leftovers: %v", left)
	}
}

// mountOverlay mounts layers (lowest first) with upper at a new directory
// and returns it; it skips the test when overlayfs cannot be mounted.
func mountOverlay(t *testing.T, layers []string, upper string) string {
	t.Helper()
	work, merged := t.TempDir(), t.TempDir()
	lower := slices.Clone(layers)
	slices.Reverse(lower) // overlay wants the top layer first
	opts := "lowerdir=" + strings.Join(lower, ":")
	if upper != "" {
		opts += ",upperdir=" + upper + ",workdir=" + work
	}
	if err := unix.Mount("overlay", merged, "overlay", 0, opts+",redirect_dir=off,index=off,metacopy=off"); err != nil {
		t.Skipf("cannot mount overlayfs here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(merged, unix.MNT_DETACH) })
	return merged
}

func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(root, p); rel != "." {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOverlayEndToEnd mounts an imported image with overlayfs, changes it
// through the mount as a sandbox would, commits the upper directory and
// checks that the kernel shows the committed image as the sandbox left it.
func TestOverlayEndToEnd(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	base := layerOf(t, file("a", "a"), dir("dir"), file("dir/b", "b"), file("dir/c", "c"), file("keep", "k"))
	top := layerOf(t, file(".wh.keep", ""), file("k2", "k2"), dir("dir"), file("dir/.wh..wh..opq", ""), file("dir/x", "x"))
	if _, err := s.ImportTarball(ctx, writeTarball(t, imageOf(t, nil, "", base, top)), "img"); err != nil {
		t.Fatal(err)
	}
	layers := mustResolve(t, s, "img")
	ro := mountOverlay(t, layers, "")
	if got, want := listTree(t, ro), []string{"a", "dir", "dir/x", "k2"}; !slices.Equal(got, want) {
		t.Fatalf("image view %v, want %v", got, want)
	}

	upper := t.TempDir()
	m := mountOverlay(t, layers, upper)
	if err := os.Remove(filepath.Join(m, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(m, "dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(m, "dir"), 0o755); err != nil { // now opaque in the upper
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m, "dir/new"), []byte("n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Unmount(m, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, "snap", "img", upper); err != nil {
		t.Fatal(err)
	}
	view := mountOverlay(t, mustResolve(t, s, "snap"), "")
	if got, want := listTree(t, view), []string{"dir", "dir/new", "k2"}; !slices.Equal(got, want) {
		t.Fatalf("committed view %v, want %v", got, want)
	}
	if got := readFile(t, filepath.Join(view, "dir/new")); got != "n" {
		t.Fatalf("dir/new = %q", got)
	}
}
