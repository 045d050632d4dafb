package web_test

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Pull-on-create against an in-process registry: off by default, an
// unknown image's error says how to get it; only an admin may turn it on
// (the change is an event every member sees); then any member's create
// pulls the image it names; a pull that fails is the create's error and
// leaves no image and no sandbox; bad input changes nothing.
func TestPullOnCreate(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	for _, repo := range []string{"/team/py:3.12", "/team/other:1"} {
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		r, err := name.ParseReference(host + repo)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(r, img, remote.WithContext(context.Background())); err != nil {
			t.Fatal(err)
		}
	}
	ref := host + "/team/py:3.12"
	type settings struct {
		PullOnCreate bool `json:"pull_on_create"`
	}
	images := func() int {
		var l struct{ Items []struct{ Names []string } }
		if st := s.do("GET", "/api/v1/images", s.Token, nil, &l); st != 200 {
			t.Fatalf("list images: %d", st)
		}
		return len(l.Items)
	}
	boxes := func(token string) int {
		var l struct{ Items []any }
		s.do("GET", "/api/v1/sandboxes", token, nil, &l)
		return len(l.Items)
	}
	pullOn := func(token string) bool {
		var v settings
		if st := s.do("GET", "/api/v1/settings/sandboxes", token, nil, &v); st != 200 {
			t.Fatalf("get sandbox settings: %d", st)
		}
		return v.PullOnCreate
	}

	// Off by default: a clear error that says how to get the image.
	if pullOn(s.BobToken) {
		t.Fatal("pull-on-create is on by default")
	}
	var e apiError
	st := s.do("POST", "/api/v1/sandboxes", s.BobToken, map[string]any{"image": ref}, &e)
	wantError(t, "create from an unknown image", st, e, 404, bullpen.ENOTFOUND)
	for _, says := range []string{"not on this server", `POST /api/v1/images/pull {"ref":"` + ref + `"}`, "Settings → Sandboxes", `"pull_on_create":true`} {
		if !strings.Contains(e.Error.Message, says) {
			t.Errorf("unknown image error %q does not say %q", e.Error.Message, says)
		}
	}

	// Only an admin turns it on; bad input changes nothing.
	for _, bad := range []struct {
		what, token string
		body        any
		status      int
		code        string
	}{
		{"a member", s.BobToken, map[string]any{"pull_on_create": true}, 403, bullpen.EFORBIDDEN},
		{"no field", s.Token, map[string]any{}, 400, bullpen.EINVALID},
		{"a string", s.Token, map[string]any{"pull_on_create": "yes"}, 400, bullpen.EINVALID},
		{"an unknown field", s.Token, map[string]any{"pull_on_create": true, "pull_always": true}, 400, bullpen.EINVALID},
	} {
		e = apiError{}
		st := s.do("PATCH", "/api/v1/settings/sandboxes", bad.token, bad.body, &e)
		wantError(t, "PATCH by "+bad.what, st, e, bad.status, bad.code)
		if pullOn(s.Token) {
			t.Fatalf("PATCH by %s turned pull-on-create on", bad.what)
		}
	}
	var set settings
	if st := s.do("PATCH", "/api/v1/settings/sandboxes", s.Token, map[string]any{"pull_on_create": true}, &set); st != 200 || !set.PullOnCreate {
		t.Fatalf("admin turns pull-on-create on: %d %+v", st, set)
	}
	if !pullOn(s.BobToken) {
		t.Fatal("a member does not see pull-on-create on")
	}
	var evs struct{ Items []bullpen.Event }
	s.do("GET", "/api/v1/events?since=0&limit=1000", s.BobToken, nil, &evs)
	seen := false
	for _, ev := range evs.Items {
		if x, err := bullpen.SandboxSettingsOf(ev); err == nil && x.PullOnCreate && x.ByID != 0 && x.ByID != s.Bob.ID {
			seen = true
		}
	}
	if !seen {
		t.Errorf("a member sees no %s event of the admin's change", bullpen.EventSandboxSettings)
	}

	// A member's create pulls the image, which is then here for all.
	sb := s.create(s.BobToken, map[string]any{"image": ref})
	if sb.Image != ref || images() != 1 {
		t.Errorf("create with pull-on-create: image %q, %d images here; want %q pulled", sb.Image, images(), ref)
	}
	if sb.State != "running" {
		t.Errorf("the sandbox on the pulled image is %s", sb.State)
	}

	// A pull that fails: the create's error, nothing left behind.
	before := boxes(s.BobToken)
	for _, bad := range []struct{ ref, says, code string }{
		{host + "/team/nope:1", "not found in its registry", bullpen.ENOTFOUND},
		{"127.0.0.1:1/team/x:1", "cannot pull", bullpen.EUNAVAILABLE},
	} {
		e = apiError{}
		st := s.do("POST", "/api/v1/sandboxes", s.BobToken, map[string]any{"image": bad.ref}, &e)
		if st < 400 || e.Error.Code != bad.code || !strings.Contains(e.Error.Message, "pulling it failed") || !strings.Contains(e.Error.Message, bad.says) {
			t.Errorf("create from %s = %d %+v, want %s saying the pull failed (%s)", bad.ref, st, e.Error, bad.code, bad.says)
		}
	}
	if n := images(); n != 1 {
		t.Errorf("%d images after failed pulls, want 1", n)
	}
	if n := boxes(s.BobToken); n != before {
		t.Errorf("%d sandboxes after failed creates, want %d", n, before)
	}

	// Off again: an image the registry has is not pulled.
	if st := s.do("PATCH", "/api/v1/settings/sandboxes", s.Token, map[string]any{"pull_on_create": false}, &set); st != 200 || set.PullOnCreate {
		t.Fatalf("admin turns pull-on-create off: %d %+v", st, set)
	}
	e = apiError{}
	st = s.do("POST", "/api/v1/sandboxes", s.BobToken, map[string]any{"image": host + "/team/other:1"}, &e)
	wantError(t, "create from an unknown image, pull-on-create off again", st, e, 404, bullpen.ENOTFOUND)
	if n := images(); n != 1 {
		t.Errorf("%d images with pull-on-create off, want 1", n)
	}
}
