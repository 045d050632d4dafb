package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// isMounted (statx) agrees with mountinfo on mount points, plain
// directories, a directory bound onto itself, stacked mounts, symlinks
// and missing paths; unmountAll removes stacked mounts.
func TestIsMounted(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	plain, tm, self, link := filepath.Join(dir, "plain"), filepath.Join(dir, "tmpfs"), filepath.Join(dir, "self"), filepath.Join(dir, "link")
	for _, d := range []string{plain, tm, self} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(tm, link); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // stacked
		if err := unix.Mount("tmpfs", tm, "tmpfs", 0, "size=1m"); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mount(self, self, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = unmountAll(tm)
		_ = unmountAll(self)
	})
	for _, c := range []struct {
		path string
		want bool
	}{{tm, true}, {self, true}, {plain, false}, {link, false}, {filepath.Join(dir, "missing"), false}, {filepath.Join(tm, "."), true}} {
		if got := isMounted(c.path); got != c.want {
			t.Errorf("isMounted(%s) = %v, want %v", c.path, got, c.want)
		}
		if got := isMountedByMountinfo(filepath.Clean(c.path)); got != c.want {
			t.Errorf("isMountedByMountinfo(%s) = %v, want %v", c.path, got, c.want)
		}
	}
	if err := unmountAll(tm); err != nil {
		t.Fatal(err)
	}
	if isMounted(tm) || isMountedByMountinfo(tm) {
		t.Errorf("%s still mounted after unmountAll", tm)
	}
}
