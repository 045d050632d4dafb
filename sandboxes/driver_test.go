package sandboxes_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandboxes"
)

// refusingDriver is a driver that knows one sandbox and refuses to pause
// it, as the kubernetes driver does; anything else it is asked panics
// (the embedded nil interface).
type refusingDriver struct {
	sandboxes.Driver
	owner  int64
	paused int
}

func (d *refusingDriver) Get(_ context.Context, id string) (sandbox.Info, error) {
	if id != "sb_1" {
		return sandbox.Info{}, bullpen.Errorf(bullpen.ENOTFOUND, "no %s", id)
	}
	return sandbox.Info{ID: id, State: sandbox.StateRunning,
		Tags: map[string]string{bullpen.SandboxOwnerTag: strconv.FormatInt(d.owner, 10)}}, nil
}

func (d *refusingDriver) Pause(context.Context, string) error {
	d.paused++
	return bullpen.Errorf(bullpen.EUNSUPPORTED, "the test driver cannot pause a sandbox")
}

func (d *refusingDriver) InitPath() string { return "" }
func (d *refusingDriver) Close() error     { return nil }

// TestDriverRefusal: the Service runs on whatever driver Config.Driver
// opens (no root needed for one that is not the local runtime), hands it
// the event sink, and passes a refusal through with its code, which the
// REST layer answers with 501.
func TestDriverRefusal(t *testing.T) {
	ctx := context.Background()
	db, off, admin := openOffice(t)
	d := &refusingDriver{owner: admin.ID}
	var gotEvents bool
	cfg := sandboxes.Config{Office: off, DB: db, Driver: func(_ context.Context, sc sandbox.Config) (sandboxes.Driver, error) {
		gotEvents = sc.OnEvent != nil
		return d, nil
	}}
	svc, err := sandboxes.OpenInDir(ctx, t.TempDir(), 1000, cfg)
	if err != nil {
		t.Fatalf("OpenInDir as a non-root user with a driver: %v", err)
	}
	defer svc.Close()
	if !gotEvents {
		t.Error("the driver got no OnEvent")
	}
	err = svc.Pause(ctx, admin, "sb_1")
	if bullpen.ErrorCode(err) != bullpen.EUNSUPPORTED || d.paused != 1 {
		t.Errorf("Pause = %v (driver asked %d times), want the driver's %q", err, d.paused, bullpen.EUNSUPPORTED)
	}
	if err := svc.Ready(ctx); err != nil {
		t.Errorf("Ready = %v, want nil for a driver without an init binary", err)
	}
	if _, err := svc.PullImage(ctx, admin, "alpine", ""); bullpen.ErrorCode(err) != bullpen.EUNAVAILABLE {
		t.Errorf("PullImage on another driver = %v, want unavailable (no local image store)", err)
	}
	if svc.Manager() != sandboxes.Driver(d) {
		t.Error("Manager() is not the driver")
	}
}
