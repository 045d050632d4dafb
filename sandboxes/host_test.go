package sandboxes_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// A process that is not root is refused before anything is made on disk.
func TestOpenInDirNeedsRoot(t *testing.T) {
	dir := t.TempDir()
	svc, err := sandboxes.OpenInDir(context.Background(), dir, 1000, sandboxes.Config{})
	if !errors.Is(err, sandboxes.ErrNeedsRoot) || svc != nil {
		t.Fatalf("OpenInDir as uid 1000 = %v, %v; want ErrNeedsRoot", svc, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("data dir holds %d entries after a refusal, want none", len(ents))
	}
}

// As root the images and the sandbox state go under the data directory,
// and quotas turned off are warned about.
func TestOpenInDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("sandboxes tests need root (namespaces, cgroups, overlayfs)")
	}
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.Config(t, store.SQLite))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	off, err := office.New(ctx, db, office.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	dir := t.TempDir()
	cfg := sandboxes.Config{Office: off, DB: db, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	cfg.Sandbox.DiskQuotaOff = true
	svc, err := sandboxes.OpenInDir(ctx, dir, 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	for _, sub := range []string{"images", "sandboxes"} {
		if fi, err := os.Stat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v, want a directory", sub, err)
		}
	}
	if !strings.Contains(logs.String(), "disk quotas are off") {
		t.Errorf("log = %q, want the unbounded-disk warning", logs.String())
	}
}
