package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	bullpen "github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox/image"
)

// TestSecuritySnapshotQuota: a snapshot never takes more host disk than
// the sandbox's quota. A 2 GB sparse file in a 64 MiB sandbox makes the
// snapshot fail with ETOOLARGE and leave nothing behind (no image, no
// temporary copy), with the built-in image store and with an ImageSource;
// a snapshot that fits keeps its sparse file sparse.
func TestSecuritySnapshotQuota(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := image.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	local := newEnv(t)
	withStore := newEnv(t, func(c *Config) { c.Images = store })
	for _, e := range []*testEnv{local, withStore} {
		id := e.create(Spec{DiskBytes: 64 << 20}).ID
		e.sh(id, "truncate -s 2G /home/sandbox/sparse && echo data > /home/sandbox/small")
		_, err := e.m.Snapshot(ctx, id, "too-big")
		wantCode(t, err, bullpen.ETOOLARGE)
		if ents, _ := os.ReadDir(e.m.tmpDir); len(ents) != 0 {
			t.Errorf("failed snapshot left %d entries in %s", len(ents), e.m.tmpDir)
		}
		if _, err := os.Stat(filepath.Join(e.m.imgDir, "too-big")); err == nil {
			t.Errorf("failed snapshot left an image directory")
		}
		_, err = e.m.Create(ctx, Spec{Image: "too-big"})
		wantCode(t, err, bullpen.ENOTFOUND)
	}
	if _, err := store.Get(ctx, "too-big"); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		t.Fatalf("image store has a record of the failed snapshot: %v", err)
	}

	// 8 MiB of data and a 40 MiB file with a 1 MiB extent: 48 MiB at
	// apparent size fits the 64 MiB quota.
	e := local
	id := e.create(Spec{DiskBytes: 64 << 20}).ID
	e.sh(id, "head -c 8M /dev/urandom > /home/sandbox/data && truncate -s 40M /home/sandbox/holey && "+
		"dd if=/dev/urandom of=/home/sandbox/holey bs=1M count=1 seek=20 conv=notrunc 2>/dev/null")
	sum := e.sh(id, "md5sum /home/sandbox/data /home/sandbox/holey | cut -d' ' -f1")
	ref, err := e.m.Snapshot(ctx, id, "fits")
	if err != nil {
		t.Fatal(err)
	}
	imgDir := filepath.Join(e.m.imgDir, ref)
	if du := duBytes(t, imgDir); du > 64<<20 || du < 9<<20 {
		t.Fatalf("image takes %d bytes of host disk; want 9 MiB..64 MiB", du)
	}
	if du := duBytes(t, filepath.Join(imgDir, "layer", "home", "sandbox", "holey")); du > 2<<20 {
		t.Fatalf("sparse file takes %d bytes in the image: not sparse", du)
	}
	from := e.create(Spec{Image: ref})
	if got := e.sh(from.ID, "md5sum /home/sandbox/data /home/sandbox/holey | cut -d' ' -f1"); got != sum {
		t.Fatalf("snapshot contents differ: %q, want %q", got, sum)
	}
}

// duBytes is the host disk space a path takes (du -s, bytes).
func duBytes(t *testing.T, p string) int64 {
	t.Helper()
	out, err := exec.Command("du", "-s", "-B1", p).Output()
	if err != nil {
		t.Fatalf("du %s: %v", p, err)
	}
	n, err := strconv.ParseInt(strings.Fields(string(out))[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
