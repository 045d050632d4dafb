package sandboxes_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandboxes"
)

// Creates run side by side (provisioning is outside the admission lock),
// yet concurrent creates cannot pass the per-member limit together, nor
// take the same name twice.
func TestConcurrentCreatesKeepLimitAndNames(t *testing.T) {
	f := newFixture(t, sandboxes.Config{MaxPerMember: 3})
	ctx := context.Background()
	results := make(chan error, 6)
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.svc.Create(ctx, f.alice, sandbox.Spec{})
			results <- err
		}()
	}
	wg.Wait()
	close(results)
	ok, limited := 0, 0
	for err := range results {
		switch {
		case err == nil:
			ok++
		case bullpen.IsCode(err, bullpen.ERATELIMIT):
			limited++
		default:
			t.Errorf("Create: %v", err)
		}
	}
	if ok != 3 || limited != 3 {
		t.Errorf("6 concurrent creates with MaxPerMember 3: %d made, %d refused; want 3 and 3", ok, limited)
	}
	own, _ := f.svc.List(ctx, f.alice, nil)
	if len(own) != 3 {
		t.Errorf("alice has %d sandboxes, want 3", len(own))
	}

	names := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.svc.Create(ctx, f.bob, sandbox.Spec{Name: "same"})
			names <- err
		}()
	}
	wg.Wait()
	close(names)
	made := 0
	for err := range names {
		if err == nil {
			made++
		} else if !bullpen.IsCode(err, bullpen.ECONFLICT) {
			t.Errorf("Create(same): %v, want ECONFLICT or success", err)
		}
	}
	if made != 1 {
		t.Errorf("4 concurrent creates named %q: %d made, want 1", "same", made)
	}
}

// A failed create gives its slot back.
func TestFailedCreateReleasesSlot(t *testing.T) {
	f := newFixture(t, sandboxes.Config{MaxPerMember: 1})
	ctx := context.Background()
	if _, err := f.svc.Create(ctx, f.alice, sandbox.Spec{Image: "no-such-image"}); err == nil {
		t.Fatal("Create of an unknown image succeeded")
	} else if msg := bullpen.ErrorMessage(err); !bullpen.IsCode(err, bullpen.ENOTFOUND) || !strings.Contains(msg, `POST /api/v1/images/pull {"ref":"no-such-image"}`) {
		t.Errorf("unknown image: %q, want ENOTFOUND saying how to pull it", msg)
	}
	if _, err := f.svc.Create(ctx, f.alice, sandbox.Spec{Name: "x", MemoryBytes: -1}); err == nil {
		t.Fatal("Create with negative memory succeeded")
	}
	f.create(t, f.alice, sandbox.Spec{Name: "x"})
}
