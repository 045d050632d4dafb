package sandboxes_test

import (
	"context"
	"testing"

	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// The service reaches the store only through the DB it is given: without
// one (or without the office) it refuses to start, rather than reaching
// the office's database some other way.
func TestNewNeedsOfficeAndDB(t *testing.T) {
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
	for name, cfg := range map[string]sandboxes.Config{"no db": {Office: off}, "no office": {DB: db}} {
		if svc, err := sandboxes.Open(ctx, cfg); err == nil || svc != nil {
			t.Errorf("%s: got %v, %v; want an error", name, svc, err)
		}
	}
}
