package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	bullpen "github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox/image"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// tinyImageTarball writes a docker tarball of a minimal image: dash, cat
// and libc copied from the host, a file in /app, env and workdir.
func tinyImageTarball(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	addDir := func(p string) {
		tw.WriteHeader(&tar.Header{Name: p + "/", Typeflag: tar.TypeDir, Mode: 0o755})
	}
	addFile := func(p string, body []byte, mode int64) {
		tw.WriteHeader(&tar.Header{Name: p, Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(body))})
		tw.Write(body)
	}
	for _, d := range []string{"bin", "lib", "lib/x86_64-linux-gnu", "lib64", "app", "etc"} {
		addDir(d)
	}
	for dst, src := range map[string]string{"bin/sh": "/bin/dash", "bin/cat": "/usr/bin/cat",
		"lib/x86_64-linux-gnu/libc.so.6": "/lib/x86_64-linux-gnu/libc.so.6",
		"lib64/ld-linux-x86-64.so.2":     "/lib64/ld-linux-x86-64.so.2"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Skipf("host lacks %s: %v", src, err)
		}
		addFile(dst, b, 0o755)
	}
	addFile("app/hello.txt", []byte("hello from the image\n"), 0o644)
	tw.Close()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(buf.Bytes())), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.Config(img, v1.Config{Env: []string{"FROM_IMAGE=yes", "PATH=/bin"}, WorkingDir: "/app"})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := name.ParseReference("test/tiny:1")
	p := filepath.Join(t.TempDir(), "tiny.tar")
	if err := tarball.WriteToFile(p, ref, img); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImageStoreIntegration(t *testing.T) {
	t.Parallel()
	needRoot(t)
	ctx := context.Background()
	store, err := image.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.ImportTarball(ctx, tinyImageTarball(t), "tiny"); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *Config) { c.Images = store })

	// A sandbox from an imported image.
	sb := e.create(Spec{Image: "tiny"})
	if sb.Workdir != "/app" {
		t.Fatalf("workdir %q", sb.Workdir)
	}
	if out := e.sh(sb.ID, "echo $FROM_IMAGE; cat hello.txt; test -e /usr/bin/python3 || echo no-host-tools"); out != "yes\nhello from the image\nno-host-tools\n" {
		t.Fatalf("image sandbox: %q", out)
	}
	// Snapshot -> Create on top of the imported image.
	e.sh(sb.ID, "echo changed > /home/sandbox/note")
	ref, err := e.m.Snapshot(ctx, sb.ID, "tiny-snap")
	if err != nil {
		t.Fatal(err)
	}
	sb2 := e.create(Spec{Image: ref})
	if out := e.sh(sb2.ID, "cat /home/sandbox/note /app/hello.txt"); out != "changed\nhello from the image\n" {
		t.Fatalf("snapshot sandbox: %q", out)
	}
	// Snapshot of a host-base sandbox goes through the store too and comes
	// back on the host base.
	h := e.create(Spec{})
	e.sh(h.ID, "echo on-host > /home/sandbox/h.txt")
	href, err := e.m.Snapshot(ctx, h.ID, "host-snap")
	if err != nil {
		t.Fatal(err)
	}
	h2 := e.create(Spec{Image: href})
	if out := e.sh(h2.ID, "cat /home/sandbox/h.txt; python3 -c 'print(42)'"); out != "on-host\n42\n" {
		t.Fatalf("host snapshot sandbox: %q", out)
	}
	_, err = e.m.Create(ctx, Spec{Image: "not-imported"})
	wantCode(t, err, bullpen.ENOTFOUND)
}
