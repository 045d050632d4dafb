package sandboxes_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// TestMain lets the test binary serve as the sandboxes' init.
func TestMain(m *testing.M) {
	sandbox.MaybeRunInit()
	os.Exit(m.Run())
}

// fixture is a Service over real sandboxes and a real office, with an
// admin, two humans and an agent. robo carries IsAdmin although the office
// never grants it to agents: the Service must not trust that flag alone.
type fixture struct {
	svc                     *sandboxes.Service
	off                     *office.Office
	admin, alice, bob, robo bullpen.Member
}

// newFixture opens the Service with its state in temp dirs. Cleanup
// terminates every sandbox before closing the Service.
func newFixture(t testing.TB, cfg sandboxes.Config) *fixture {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("sandboxes tests need root (namespaces, cgroups, overlayfs)")
	}
	ctx := context.Background()
	db, off, admin := openOffice(t)
	f := &fixture{off: off, admin: admin}
	var err error
	f.alice = f.member(t, "alice", bullpen.KindHuman)
	f.bob = f.member(t, "bob", bullpen.KindHuman)
	f.robo = f.member(t, "robo", bullpen.KindAgent)
	f.robo.IsAdmin = true
	cfg.Office, cfg.DB = off, db
	cfg.Sandbox = sandbox.Config{StateDir: t.TempDir(), CheckInterval: 100 * time.Millisecond}
	if f.svc, err = sandboxes.Open(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := f.svc.Manager().TerminateAll(ctx); err != nil {
			t.Errorf("TerminateAll: %v", err)
		}
		f.svc.Close()
	})
	return f
}

// openOffice opens an office on a fresh SQLite database and returns it
// with its first admin.
func openOffice(t testing.TB) (*store.DB, *office.Office, bullpen.Member) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.Config(t, store.SQLite))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	off, err := office.New(ctx, db, office.Config{})
	if err != nil {
		t.Fatal(err)
	}
	token, err := off.Bootstrap(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := off.Authenticate(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	return db, off, admin
}

func (f *fixture) member(t testing.TB, handle string, kind bullpen.MemberKind) bullpen.Member {
	t.Helper()
	m, err := f.off.CreateMember(context.Background(), f.admin, bullpen.MemberInput{Handle: handle, DisplayName: handle, Kind: kind})
	if err != nil {
		t.Fatalf("CreateMember(%s): %v", handle, err)
	}
	return m
}

// create makes a sandbox for actor and fails the test on an error.
func (f *fixture) create(t *testing.T, actor bullpen.Member, spec sandbox.Spec) sandbox.Info {
	t.Helper()
	in, err := f.svc.Create(context.Background(), actor, spec)
	if err != nil {
		t.Fatalf("Create(%s, %q) by %s: %v", spec.Image, spec.Name, actor.Handle, err)
	}
	return in
}

// wantCode fails the test unless err has the code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := bullpen.ErrorCode(err); got != code {
		t.Errorf("%s: error = %v (code %q), want %q", what, err, got, code)
	}
}
