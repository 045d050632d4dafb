package image

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// richImage has two layers covering files, dirs, owners, modes, symlinks
// and hard links.
func richImage(t *testing.T) v1.Image {
	owned := file("home/sandbox/secret", "s3cret")
	owned.uid, owned.gid, owned.mode = 1000, 1000, 0o600
	suid := file("usr/bin/tool", "#!/bin/sh\necho hi\n")
	suid.mode = 0o4755
	capped := file("usr/bin/ping", "ping")
	capped.xattrs = map[string]string{"user.origin": "test", "trusted.overlay.opaque": "y"}
	l1 := layerOf(t, dir("etc"), file("etc/os-release", "ID=test\n"), dir("home/sandbox"), owned,
		dir("usr/bin"), suid, capped, symlink("bin", "usr/bin"), hardlink("usr/bin/tool2", "usr/bin/tool"))
	l2 := layerOf(t, file("etc/motd", "hello\n"), file("etc/os-release", "ID=test2\n"))
	return imageOf(t, []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}, "/home/sandbox", l1, l2)
}

// checkRich asserts what richImage unpacks to.
func checkRich(t *testing.T, s *Store, ref string) {
	t.Helper()
	layers, env, wd, err := s.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 2 || !filepath.IsAbs(layers[0]) {
		t.Fatalf("layers = %v", layers)
	}
	if !reflect.DeepEqual(env, []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}) || wd != "/home/sandbox" {
		t.Fatalf("env %v workdir %q", env, wd)
	}
	l1, l2 := layers[0], layers[1]
	if got := readFile(t, filepath.Join(l1, "etc/os-release")); got != "ID=test\n" {
		t.Fatalf("lower os-release = %q", got)
	}
	if got := readFile(t, filepath.Join(l2, "etc/os-release")); got != "ID=test2\n" {
		t.Fatalf("upper os-release = %q", got)
	}
	if _, err := os.Stat(filepath.Join(l2, "usr")); !os.IsNotExist(err) {
		t.Fatalf("second layer has usr: %v", err)
	}
	st := stat(t, filepath.Join(l1, "home/sandbox/secret"))
	if st.Uid != 1000 || st.Gid != 1000 || st.Mode&0o7777 != 0o600 {
		t.Fatalf("secret uid %d gid %d mode %o", st.Uid, st.Gid, st.Mode&0o7777)
	}
	tool := stat(t, filepath.Join(l1, "usr/bin/tool"))
	if tool.Mode&0o7777 != 0o4755 {
		t.Fatalf("tool mode %o, want 4755", tool.Mode&0o7777)
	}
	if tool2 := stat(t, filepath.Join(l1, "usr/bin/tool2")); tool2.Ino != tool.Ino || tool.Nlink != 2 {
		t.Fatalf("tool2 is not a hard link of tool")
	}
	if to, err := os.Readlink(filepath.Join(l1, "bin")); err != nil || to != "usr/bin" {
		t.Fatalf("bin -> %q, %v", to, err)
	}
	ping := filepath.Join(l1, "usr/bin/ping")
	if xattr(ping, "user.origin") != "test" || xattr(ping, "trusted.overlay.opaque") != "" {
		t.Fatalf("ping xattrs: user.origin=%q trusted.overlay.opaque=%q", xattr(ping, "user.origin"), xattr(ping, "trusted.overlay.opaque"))
	}
	if fi, _ := os.Stat(filepath.Join(l1, "etc")); !fi.ModTime().Equal(mtime) {
		t.Fatalf("etc mtime %v, want %v", fi.ModTime(), mtime)
	}
}

func TestImportTarball(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	src := richImage(t)
	img, err := s.ImportTarball(ctx, writeTarball(t, src), "rich")
	if err != nil {
		t.Fatal(err)
	}
	cfgName, _ := src.ConfigName()
	if img.ID != cfgName.String() || !reflect.DeepEqual(img.Names, []string{"rich"}) || img.Base != "" {
		t.Fatalf("image = %+v, want id %s", img, cfgName)
	}
	hex := strings.TrimPrefix(img.ID, "sha256:")
	for _, ref := range []string{"rich", img.ID, hex, hex[:12], "sha256:" + hex[:12]} {
		checkRich(t, s, ref)
	}
	if base, err := s.Base(ctx, "rich"); err != nil || base != "" {
		t.Fatalf("Base = %q, %v", base, err)
	}
	if list, err := s.List(ctx); err != nil || len(list) != 1 || list[0].ID != img.ID {
		t.Fatalf("List = %v, %v", list, err)
	}
	if left := hiddenLeftovers(t, s); len(left) != 0 {
		t.Fatalf("leftovers: %v", left)
	}
}

func TestImportLayout(t *testing.T) {
	s := newStore(t)
	img, err := s.ImportLayout(context.Background(), writeLayout(t, richImage(t)), "rich")
	if err != nil {
		t.Fatal(err)
	}
	checkRich(t, s, img.ID)
	_, err = s.ImportLayout(context.Background(), t.TempDir(), "x")
	wantCode(t, err, bullpen.ENOTFOUND)
}

func TestPull(t *testing.T) {
	s := newStore(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ref, err := name.ParseReference(host + "/team/rich:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, richImage(t)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	img, err := s.Pull(ctx, ref.String(), "rich")
	if err != nil {
		t.Fatal(err)
	}
	checkRich(t, s, "rich")
	// By digest too, with WithInsecure; nothing new is unpacked.
	d, err := richImage(t).Digest()
	if err != nil {
		t.Fatal(err)
	}
	before := s.unpacks.Load()
	if _, err := s.Pull(ctx, host+"/team/rich@"+d.String(), "rich2", WithInsecure()); err != nil {
		t.Fatal(err)
	}
	if s.unpacks.Load() != before {
		t.Fatal("pulling the same image again unpacked layers")
	}
	if again, _ := s.Get(ctx, "rich2"); again.ID != img.ID {
		t.Fatalf("rich2 = %s, want %s", again.ID, img.ID)
	}
	_, err = s.Pull(ctx, host+"/team/rich:nope", "x")
	wantCode(t, err, bullpen.ENOTFOUND)
	_, err = s.Pull(ctx, "Not A Ref", "x")
	wantCode(t, err, bullpen.EINVALID)
}

func TestSharedLayersUnpackedOnce(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	shared := layerOf(t, file("shared.txt", "both"))
	a := imageOf(t, nil, "", shared, layerOf(t, file("a.txt", "a")))
	b := imageOf(t, nil, "", shared, layerOf(t, file("b.txt", "b")))
	if _, err := s.ImportTarball(ctx, writeTarball(t, a), "a"); err != nil {
		t.Fatal(err)
	}
	la := mustResolve(t, s, "a")
	ino := stat(t, la[0]).Ino
	if _, err := s.ImportLayout(ctx, writeLayout(t, b), "b"); err != nil {
		t.Fatal(err)
	}
	lb := mustResolve(t, s, "b")
	if la[0] != lb[0] || la[1] == lb[1] {
		t.Fatalf("layers a=%v b=%v: want the first shared", la, lb)
	}
	if got := s.unpacks.Load(); got != 3 {
		t.Fatalf("unpacked %d layers, want 3", got)
	}
	if stat(t, lb[0]).Ino != ino {
		t.Fatal("the shared layer was unpacked again")
	}
	if n := len(storeEntries(t, s, "layers")); n != 3 {
		t.Fatalf("layers dir has %d entries, want 3", n)
	}
}

func TestConcurrentImports(t *testing.T) {
	s := newStore(t)
	other, err := Open(s.Dir()) // a second Store on the same dir, like another process
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	img, err := random.Image(1<<20, 3)
	if err != nil {
		t.Fatal(err)
	}
	path := writeTarball(t, img)
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := s
			if i%3 == 0 {
				st = other
			}
			_, err := st.ImportTarball(ctx, path, fmt.Sprintf("img%d", i%4))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := s.unpacks.Load(); n > 3 {
		t.Fatalf("one Store unpacked %d layers, want at most 3", n)
	}
	if n := s.unpacks.Load() + other.unpacks.Load(); n < 3 || n > 6 {
		t.Fatalf("stores unpacked %d layers in all", n)
	}
	if got := storeEntries(t, s, "layers"); len(got) != 3 {
		t.Fatalf("layers: %v", got)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || len(list[0].Names) != 4 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if left := hiddenLeftovers(t, s); len(left) != 0 {
		t.Fatalf("leftovers: %v", left)
	}
}

func TestNameMovesAndUnknownRefs(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	x, err := s.ImportTarball(ctx, writeTarball(t, imageOf(t, nil, "", layerOf(t, file("x", "x")))), "app")
	if err != nil {
		t.Fatal(err)
	}
	y, err := s.ImportTarball(ctx, writeTarball(t, imageOf(t, nil, "", layerOf(t, file("y", "y")))), "app")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "app"); got.ID != y.ID {
		t.Fatalf("app = %s, want %s", got.ID, y.ID)
	}
	old, err := s.Get(ctx, x.ID)
	if err != nil || len(old.Names) != 0 {
		t.Fatalf("old image = %+v, %v", old, err)
	}
	if disk, _ := s.readImage(strings.TrimPrefix(x.ID, "sha256:")); len(disk.Names) != 0 {
		t.Fatalf("old manifest still names %v", disk.Names)
	}
	for _, ref := range []string{"nope", "sha256:" + strings.Repeat("0", 64), strings.Repeat("f", 12), "abc", "host"} {
		_, err := s.Get(ctx, ref)
		wantCode(t, err, bullpen.ENOTFOUND)
		_, _, _, err = s.Resolve(ctx, ref)
		wantCode(t, err, bullpen.ENOTFOUND)
		if want := fmt.Sprintf("image %q not found", ref); bullpen.ErrorMessage(err) != want {
			t.Fatalf("message %q, want %q", bullpen.ErrorMessage(err), want)
		}
	}
	_, err = s.Get(ctx, "")
	wantCode(t, err, bullpen.EINVALID)
	for _, bad := range []string{"", "host", "has space", "-x", "sha256:abc", strings.Repeat("a", 64)} {
		_, err := s.ImportTarball(ctx, "/nonexistent.tar", bad)
		wantCode(t, err, bullpen.EINVALID)
	}
	_, err = s.ImportTarball(ctx, filepath.Join(t.TempDir(), "missing.tar"), "m")
	wantCode(t, err, bullpen.ENOTFOUND)
	junk := filepath.Join(t.TempDir(), "junk.tar")
	os.WriteFile(junk, []byte("not a tar"), 0o600)
	_, err = s.ImportTarball(ctx, junk, "j")
	wantCode(t, err, bullpen.EINVALID)
}
