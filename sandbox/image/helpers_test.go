package image

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"golang.org/x/sys/unix"
)

// imageSource is the interface the sandbox runtime consumes.
type imageSource interface {
	Resolve(ctx context.Context, ref string) (layers []string, env []string, workdir string, err error)
	Commit(ctx context.Context, name string, baseRef string, upperDir string) (ref string, err error)
}

var _ imageSource = (*Store)(nil)

var mtime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// ent is one tar entry of a test layer.
type ent struct {
	name, body, link string
	typ              byte
	mode             int64
	uid, gid         int
	xattrs           map[string]string
}

func file(name, body string) ent { return ent{name: name, body: body, typ: tar.TypeReg, mode: 0o644} }
func dir(name string) ent        { return ent{name: name, typ: tar.TypeDir, mode: 0o755} }
func symlink(name, to string) ent {
	return ent{name: name, link: to, typ: tar.TypeSymlink, mode: 0o777}
}
func hardlink(name, to string) ent { return ent{name: name, link: to, typ: tar.TypeLink, mode: 0o644} }

// tarBytes builds a layer tar from entries, in order.
func tarBytes(t *testing.T, ents ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		hdr := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: e.mode,
			Uid: e.uid, Gid: e.gid, ModTime: mtime, Size: int64(len(e.body)), Format: tar.FormatPAX}
		for k, v := range e.xattrs {
			if hdr.PAXRecords == nil {
				hdr.PAXRecords = map[string]string{}
			}
			hdr.PAXRecords[paxXattr+k] = v
		}
		if e.typ != tar.TypeReg {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// layerOf makes a (gzip-compressed) layer from entries.
func layerOf(t *testing.T, ents ...ent) v1.Layer {
	t.Helper()
	b := tarBytes(t, ents...)
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// imageOf makes an image of layers with the given env and workdir.
func imageOf(t *testing.T, env []string, workdir string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.Config(img, v1.Config{Env: env, WorkingDir: workdir})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func writeTarball(t *testing.T, img v1.Image) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "img.tar")
	if err := tarball.WriteToFile(p, name.MustParseReference("test/img:1"), img); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeLayout(t *testing.T, img v1.Image) string {
	t.Helper()
	d := t.TempDir()
	p, err := layout.Write(d, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	return d
}

func newStore(t *testing.T) *Store {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the image store needs root (ownership, whiteout devices, trusted xattrs)")
	}
	s, err := Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := bullpen.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func stat(t *testing.T, p string) *syscall.Stat_t {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

func xattr(p, name string) string {
	buf := make([]byte, 256)
	n, err := unix.Lgetxattr(p, name, buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

// assertWhiteout fails unless p is an overlay whiteout (char device 0:0).
func assertWhiteout(t *testing.T, p string) {
	t.Helper()
	st := stat(t, p)
	if st.Mode&syscall.S_IFMT != syscall.S_IFCHR || st.Rdev != 0 {
		t.Fatalf("%s: mode %o rdev %d, want a 0:0 char device", p, st.Mode, st.Rdev)
	}
}

// mustResolve resolves ref and returns its layers.
func mustResolve(t *testing.T, s *Store, ref string) []string {
	t.Helper()
	layers, _, _, err := s.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return layers
}

// storeEntries lists the non-hidden entries of a store subdirectory.
func storeEntries(t *testing.T, s *Store, sub string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(s.Dir(), sub))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// hiddenLeftovers reports temporary entries left in the store.
func hiddenLeftovers(t *testing.T, s *Store) []string {
	var out []string
	for _, sub := range []string{"layers", "images", "tmp", "blobs/sha256"} {
		for _, n := range storeEntries(t, s, sub) {
			if strings.HasPrefix(n, ".") || sub == "tmp" {
				out = append(out, sub+"/"+n)
			}
		}
	}
	return out
}
