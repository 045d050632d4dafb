package image

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"golang.org/x/sys/unix"
)

func TestRemoveAndGC(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	shared := layerOf(t, file("shared", "s"))
	a, err := s.ImportTarball(ctx, writeTarball(t, imageOf(t, nil, "", shared, layerOf(t, file("a", "a")))), "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.ImportTarball(ctx, writeTarball(t, imageOf(t, nil, "", shared, layerOf(t, file("b", "b")))), "b")
	if err != nil {
		t.Fatal(err)
	}
	la, lb := mustResolve(t, s, "a"), mustResolve(t, s, "b")

	if err := s.Remove(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"a", a.ID} {
		_, err := s.Get(ctx, ref)
		wantCode(t, err, bullpen.ENOTFOUND)
	}
	if _, err := os.Stat(la[1]); !os.IsNotExist(err) {
		t.Fatalf("a's own layer survived: %v", err)
	}
	if got := readFile(t, filepath.Join(la[0], "shared")); got != "s" {
		t.Fatal("the layer b still uses was removed")
	}
	if got := readFile(t, filepath.Join(lb[1], "b")); got != "b" {
		t.Fatal("b's layer was removed")
	}
	if _, err := os.Stat(s.blobPath(strings.TrimPrefix(a.ID, "sha256:"))); !os.IsNotExist(err) {
		t.Fatalf("a's config blob survived: %v", err)
	}
	wantCode(t, s.Remove(ctx, "a"), bullpen.ENOTFOUND)

	// Remove by id prefix; then the store is empty.
	if err := s.Remove(ctx, strings.TrimPrefix(b.ID, "sha256:")[:12]); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"layers", "images", "blobs/sha256"} {
		if got := storeEntries(t, s, sub); len(got) != 0 {
			t.Fatalf("%s not empty: %v", sub, got)
		}
	}
	if names, _ := s.readNames(); len(names) != 0 {
		t.Fatalf("names left: %v", names)
	}
}

func TestGCKeepsPinnedAndFreshTemps(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	orphan := strings.Repeat("ab", 32)
	pinned := strings.Repeat("cd", 32)
	for _, h := range []string{orphan, pinned} {
		if err := os.Mkdir(s.layerPath(h), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fresh := filepath.Join(s.Dir(), "layers", ".tmp-fresh")
	if err := os.Mkdir(fresh, 0o755); err != nil {
		t.Fatal(err)
	}
	unpin := s.pin([]string{pinned})
	removed, err := s.GC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != "sha256:"+orphan {
		t.Fatalf("removed %v", removed)
	}
	if _, err := os.Stat(s.layerPath(pinned)); err != nil {
		t.Fatal("GC removed a layer an import in flight uses")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatal("GC removed a fresh temp dir")
	}
	unpin()
	if removed, _ := s.GC(ctx); len(removed) != 1 || removed[0] != "sha256:"+pinned {
		t.Fatalf("after unpin removed %v", removed)
	}
}

// TestLayersReadOnlyDirsRemovable checks that a layer keeps a read-only
// directory's mode and that GC still deletes it.
func TestLayersReadOnlyDirsRemovable(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ro := dir("ro")
	ro.mode = 0o555
	if _, err := s.ImportTarball(ctx, writeTarball(t, imageOf(t, nil, "", layerOf(t, ro, file("ro/f", "f")))), "ro"); err != nil {
		t.Fatal(err)
	}
	l := mustResolve(t, s, "ro")[0]
	if st := stat(t, filepath.Join(l, "ro")); st.Mode&0o7777 != 0o555 {
		t.Fatalf("ro mode %o", st.Mode&0o7777)
	}
	if err := unix.Access(filepath.Join(l, "ro/f"), unix.R_OK); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(ctx, "ro"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l); !os.IsNotExist(err) {
		t.Fatalf("layer with a read-only dir survived: %v", err)
	}
}
