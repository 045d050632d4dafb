package image

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

func TestWhiteoutsAndOpaqueDirs(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	base := layerOf(t, file("gone.txt", "x"), dir("cfg"), file("cfg/old", "old"), dir("a"), file("a/b", "b"), file("a/keep", "k"))
	top := layerOf(t,
		file(".wh.gone.txt", ""),
		dir("cfg"), file("cfg/.wh..wh..opq", ""), file("cfg/new", "new"),
		file("a/.wh.b", ""),
		file(".wh.later", ""), dir("later"), file("later/f", "f"), // whiteout then same-name dir: opaque
		file("kept", "mine"), file(".wh.kept", ""), // an entry of the same layer wins
		ent{name: "dev/null", typ: tar.TypeChar, mode: 0o666, body: ""}, // devices are skipped
	)
	if _, err := s.ImportTarball(ctx, writeTarball(t, imageOf(t, nil, "", base, top)), "wh"); err != nil {
		t.Fatal(err)
	}
	l := mustResolve(t, s, "wh")[1]
	assertWhiteout(t, filepath.Join(l, "gone.txt"))
	assertWhiteout(t, filepath.Join(l, "a/b"))
	if got := xattr(filepath.Join(l, "cfg"), xattrOpaque); got != "y" {
		t.Fatalf("cfg opaque xattr = %q", got)
	}
	if got := xattr(filepath.Join(l, "later"), xattrOpaque); got != "y" {
		t.Fatalf("later opaque xattr = %q", got)
	}
	if got := xattr(filepath.Join(l, "a"), xattrOpaque); got != "" {
		t.Fatalf("a must not be opaque, xattr = %q", got)
	}
	if got := readFile(t, filepath.Join(l, "cfg/new")); got != "new" {
		t.Fatalf("cfg/new = %q", got)
	}
	if got := readFile(t, filepath.Join(l, "kept")); got != "mine" {
		t.Fatalf("kept = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(l, "dev/null")); !os.IsNotExist(err) {
		t.Fatalf("device was created: %v", err)
	}
	err := filepath.Walk(l, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(fi.Name(), whPrefix) {
			t.Errorf("whiteout file left as is: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The lower layer is untouched.
	if got := readFile(t, filepath.Join(mustResolve(t, s, "wh")[0], "a/b")); got != "b" {
		t.Fatalf("lower a/b = %q", got)
	}
}

func TestMaliciousLayersRejected(t *testing.T) {
	outside := t.TempDir() // a symlink in a layer points here
	cases := []struct {
		name string
		ents []ent
		want string
	}{
		{"dotdot", []ent{file("../../../../../escaped", "x")}, "path traversal"},
		{"dotdot in the middle", []ent{dir("a"), file("a/../../../../../../escaped", "x")}, "path traversal"},
		{"absolute", []ent{file(filepath.Join(outside, "abs"), "x")}, "absolute path"},
		{"symlink then write", []ent{symlink("evil", outside), file("evil/pwned", "x")}, "is a symlink"},
		{"relative symlink then write", []ent{symlink("up", "../../../.."), file("up/escaped", "x")}, "is a symlink"},
		{"symlink then dir", []ent{symlink("evil", outside), dir("evil/sub")}, "is a symlink"},
		{"hardlink out", []ent{hardlink("h", "../../../../../etc/passwd")}, "path traversal"},
		{"hardlink through symlink", []ent{symlink("evil", "/etc"), hardlink("h", "evil/passwd")}, "is a symlink"},
		{"hardlink absolute", []ent{hardlink("h", "/etc/passwd")}, "absolute path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			img := imageOf(t, nil, "", layerOf(t, tc.ents...))
			_, err := s.ImportTarball(context.Background(), writeTarball(t, img), "evil")
			wantCode(t, err, bullpen.EINVALID)
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "image: unpack layer sha256:") {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Fatalf("wrote outside the layer: %v", ents)
			}
			for _, e := range tc.ents { // where a naive join would have written
				if !filepath.IsAbs(e.name) {
					p := filepath.Join(s.Dir(), "layers", ".tmp-x", e.name)
					if _, err := os.Lstat(p); err == nil && strings.Contains(e.name, "..") {
						t.Fatalf("wrote %s", p)
					}
				}
			}
			if got := storeEntries(t, s, "layers"); len(got) != 0 {
				t.Fatalf("layers left behind: %v", got)
			}
			if got := storeEntries(t, s, "images"); len(got) != 0 {
				t.Fatalf("image recorded: %v", got)
			}
			_, err = s.Get(context.Background(), "evil")
			wantCode(t, err, bullpen.ENOTFOUND)
		})
	}
}

func TestUnpackRejectsBadDiffID(t *testing.T) {
	s := newStore(t)
	good := tarBytes(t, file("f", "good"))
	bad := tarBytes(t, file("f", "evil"))
	d := digestOf(good)
	err := s.ensureLayer(context.Background(), strings.TrimPrefix(d, "sha256:"), func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(bad)), nil
	})
	wantCode(t, err, bullpen.EINVALID)
	if got := storeEntries(t, s, "layers"); len(got) != 0 {
		t.Fatalf("layers left behind: %v", got)
	}
}
