package web_test

import (
	"context"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/image"
	"github.com/bullpen-hq/bullpen/web"
)

// Property 6: sandbox names are unique per owner, so taking a name never
// reveals another member's sandbox, and a name never reaches one.
func TestSandboxNamesArePerOwner(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	_, carolToken := s.addMember("carol", false)
	bobs := s.create(s.BobToken, map[string]any{"name": "work"})
	carols := s.create(carolToken, map[string]any{"name": "work"}) // bob's "work" is no conflict for carol
	if bobs.ID == carols.ID || bobs.Name != "work" || carols.Name != "work" {
		t.Fatalf("two members' \"work\" = %+v and %+v, want two sandboxes named work", bobs, carols)
	}
	var e apiError
	st := s.do("POST", "/api/v1/sandboxes", s.BobToken, map[string]any{"name": "work"}, &e)
	wantError(t, "bob takes his own name again", st, e, 409, bullpen.ECONFLICT)
	for _, c := range []struct {
		who, token, want string
	}{{"bob", s.BobToken, bobs.ID}, {"carol", carolToken, carols.ID}} {
		var v sbView
		if st := s.do("GET", "/api/v1/sandboxes/work", c.token, nil, &v); st != 200 || v.ID != c.want {
			t.Errorf("%s GET work = %d %s, want her own %s", c.who, st, v.ID, c.want)
		}
		if out, _ := s.run(c.token, "work", "echo mine"); out != "mine\n" {
			t.Errorf("%s runs in work: %q", c.who, out)
		}
	}
	st = s.do("GET", "/api/v1/sandboxes/"+carols.ID, s.BobToken, nil, &e)
	wantError(t, "bob GET carol's sandbox by id", st, e, 404, bullpen.ENOTFOUND)
	// An admin who has no "work" must say which one.
	st = s.do("GET", "/api/v1/sandboxes/work", s.Token, nil, &e)
	wantError(t, "admin GET an ambiguous name", st, e, 400, bullpen.EINVALID)
	if st := s.do("GET", "/api/v1/sandboxes/"+carols.ID, s.Token, nil, nil); st != 200 {
		t.Errorf("admin GET carol's sandbox by id = %d", st)
	}
	s.do("DELETE", "/api/v1/sandboxes/"+carols.ID, carolToken, nil, nil)
	var v sbView
	if st := s.do("GET", "/api/v1/sandboxes/work", s.Token, nil, &v); st != 200 || v.ID != bobs.ID {
		t.Errorf("admin GET work with only bob's left = %d %s, want %s", st, v.ID, bobs.ID)
	}
}

// Property 6: nobody but the agent can take its workspace's name. Humans
// who name a sandbox like it get their own; the agent's workspace is its
// own, found by the agent alone, before and after.
func TestSandboxAgentNameIsTheAgents(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	robo, roboToken := s.addMember("robo", true)
	ctx := context.Background()
	squat := s.create(s.BobToken, map[string]any{"name": "agent-robo"}) // before the agent's first use
	ws, err := s.Svc.Ensure(ctx, robo, sandbox.Spec{MemoryBytes: 64 << 20})
	if err != nil || ws.ID == squat.ID || bullpen.SandboxOwner(ws.Tags) != robo.ID || bullpen.SandboxName(ws.Name, ws.Tags) != "agent-robo" {
		t.Fatalf("Ensure with bob's agent-robo there = %+v, %v; want robo's own agent-robo", ws, err)
	}
	admins := s.create(s.Token, map[string]any{"name": "agent-robo"}) // after it
	again, err := s.Svc.Ensure(ctx, robo, sandbox.Spec{})
	if err != nil || again.ID != ws.ID {
		t.Errorf("Ensure after the admin named one agent-robo = %s, %v; want %s", again.ID, err, ws.ID)
	}
	for _, c := range []struct {
		who, token, want string
	}{{"robo", roboToken, ws.ID}, {"bob", s.BobToken, squat.ID}, {"admin", s.Token, admins.ID}} {
		var v sbView
		if st := s.do("GET", "/api/v1/sandboxes/agent-robo", c.token, nil, &v); st != 200 || v.ID != c.want {
			t.Errorf("%s GET agent-robo = %d %s, want %s", c.who, st, v.ID, c.want)
		}
	}
	var e apiError
	st := s.do("POST", "/api/v1/sandboxes", roboToken, map[string]any{"name": "agent-robo"}, &e)
	wantError(t, "robo names a second sandbox like its workspace", st, e, 409, bullpen.ECONFLICT)
}

// snapshot snapshots a sandbox as the holder of token; it returns the
// status and the image reference.
func (s *sbServer) snapshot(token, id, name string) (int, string) {
	var out struct {
		Image string `json:"image"`
	}
	st := s.do("POST", "/api/v1/sandboxes/"+id+"/snapshot", token, map[string]any{"name": name}, &out)
	return st, out.Image
}

// imageNames lists the images the holder of token sees.
func (s *sbServer) imageNames(token string) map[string]bool {
	var page struct{ Items []image.Image }
	if st := s.do("GET", "/api/v1/images", token, nil, &page); st != 200 {
		s.t.Fatalf("GET /images: %d", st)
	}
	out := map[string]bool{}
	for _, img := range page.Items {
		for _, n := range img.Names {
			out[n] = true
		}
	}
	return out
}

// Property 6: a member's snapshot is named "handle/…", private to its
// owner and the admins until an admin publishes it, and cannot shadow a
// shared image.
func TestSandboxImagesBelongToTheirOwner(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	_, carolToken := s.addMember("carol", false)
	bobs := s.create(s.BobToken, map[string]any{"memory": "64Mi"})
	s.run(s.BobToken, bobs.ID, "echo bob > /home/sandbox/who")
	if st, ref := s.snapshot(s.BobToken, bobs.ID, "tool"); st != 201 || ref == "" {
		t.Fatalf("bob snapshots as tool = %d %q", st, ref)
	}
	if got := s.imageNames(s.BobToken); !got["bob/tool"] || got["tool"] {
		t.Errorf("bob's images = %v, want bob/tool (namespaced), no bare tool", got)
	}
	if got := s.imageNames(carolToken); got["bob/tool"] {
		t.Errorf("carol sees bob's unpublished image: %v", got)
	}
	if got := s.imageNames(s.Token); !got["bob/tool"] {
		t.Errorf("the admin does not see bob's image: %v", got)
	}
	bobImg, err := s.Svc.Images(context.Background(), s.Bob)
	if err != nil || len(bobImg) != 1 {
		t.Fatalf("bob's images = %v, %v", bobImg, err)
	}
	var e apiError
	for _, ref := range []string{"bob/tool", bobImg[0].ID, bobImg[0].ID[len("sha256:"):][:12]} {
		st := s.do("POST", "/api/v1/sandboxes", carolToken, map[string]any{"image": ref, "memory": "64Mi"}, &e)
		wantError(t, "carol creates from bob's private image "+ref, st, e, 404, bullpen.ENOTFOUND)
	}
	carols := s.create(carolToken, map[string]any{"memory": "64Mi"})
	e = apiError{}
	st := s.do("POST", "/api/v1/sandboxes/"+carols.ID+"/snapshot", carolToken, map[string]any{"name": "bob/evil"}, &e)
	wantError(t, "carol snapshots into bob's namespace", st, e, 403, bullpen.EFORBIDDEN)
	if got := s.imageNames(s.BobToken); got["bob/evil"] {
		t.Errorf("carol's snapshot landed in bob's namespace")
	}

	// A shared image: the admin's snapshot, published. Bob's "base" is
	// bob/base and does not shadow it.
	admins := s.create(s.Token, map[string]any{"memory": "64Mi"})
	s.run(s.Token, admins.ID, "echo admin > /home/sandbox/who")
	if st, _ := s.snapshot(s.Token, admins.ID, "base"); st != 201 {
		t.Fatalf("admin snapshot = %d", st)
	}
	st = s.do("POST", "/api/v1/images/base/publish", s.BobToken, nil, &e)
	wantError(t, "bob publishes", st, e, 403, bullpen.EFORBIDDEN)
	if st := s.do("POST", "/api/v1/images/base/publish", s.Token, nil, nil); st != 200 {
		t.Fatalf("admin publishes base = %d", st)
	}
	if st, _ := s.snapshot(s.BobToken, bobs.ID, "base"); st != 201 {
		t.Fatalf("bob snapshots as base = %d", st)
	}
	fromBase := s.create(carolToken, map[string]any{"image": "base", "memory": "64Mi"})
	if out, _ := s.run(carolToken, fromBase.ID, "cat /home/sandbox/who"); out != "admin\n" {
		t.Errorf("carol's sandbox from base has %q, want the admin's published image", out)
	}

	// Once the admin publishes bob/tool, carol may use it.
	if st := s.do("POST", "/api/v1/images/bob/tool/publish", s.Token, nil, nil); st != 200 {
		t.Fatalf("admin publishes bob/tool = %d", st)
	}
	if got := s.imageNames(carolToken); !got["bob/tool"] || !got["base"] || got["bob/base"] {
		t.Errorf("carol's images after publishing = %v, want bob/tool and base, not bob/base", got)
	}
	s.do("DELETE", "/api/v1/sandboxes/"+fromBase.ID, carolToken, nil, nil)
	fromTool := s.create(carolToken, map[string]any{"image": "bob/tool", "memory": "64Mi"})
	if out, _ := s.run(carolToken, fromTool.ID, "cat /home/sandbox/who"); out != "bob\n" {
		t.Errorf("carol's sandbox from bob/tool has %q", out)
	}
}
