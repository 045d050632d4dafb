package web_test

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Bad specs get a clear error and create nothing.
func TestSandboxCreateBadInput(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	hugeEnv := map[string]string{}
	for i := 0; i < 300; i++ {
		hugeEnv["V"+strings.Repeat("X", 10)+string(rune('A'+i%26))+strings.Repeat("Y", i%7)+string(rune('a'+i/26))] = strings.Repeat("v", 900)
	}
	cases := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"not JSON", "{", 400, bullpen.EINVALID},
		{"unknown field", `{"imgae":"host"}`, 400, bullpen.EINVALID},
		{"two objects", `{} {}`, 400, bullpen.EINVALID},
		{"negative memory", map[string]any{"memory": -1}, 400, bullpen.EINVALID},
		{"negative memory string", map[string]any{"memory": "-64Mi"}, 400, bullpen.EINVALID},
		{"negative cpu", map[string]any{"cpu": -0.5}, 400, bullpen.EINVALID},
		{"negative pids", map[string]any{"pids": -3}, 400, bullpen.EINVALID},
		{"negative disk", map[string]any{"disk": -1}, 400, bullpen.EINVALID},
		{"negative timeout", map[string]any{"timeout": -5}, 400, bullpen.EINVALID},
		{"bad memory unit", map[string]any{"memory": "lots"}, 400, bullpen.EINVALID},
		{"memory as object", map[string]any{"memory": map[string]int{"mb": 5}}, 400, bullpen.EINVALID},
		{"absurd memory", map[string]any{"memory": 1e300}, 400, bullpen.EINVALID},
		{"tiny memory", map[string]any{"memory": "1Mi"}, 400, bullpen.EINVALID},
		{"too many cpus", map[string]any{"cpu": 10000}, 400, bullpen.EINVALID},
		{"bad timeout string", map[string]any{"timeout": "soon"}, 400, bullpen.EINVALID},
		{"bad idle action", map[string]any{"idle_action": "explode"}, 400, bullpen.EINVALID},
		{"unknown image", map[string]any{"image": "no-such-image:1"}, 404, bullpen.ENOTFOUND},
		{"bad name", map[string]any{"name": "bad name!"}, 400, bullpen.EINVALID},
		{"bad workdir", map[string]any{"workdir": "relative/dir"}, 400, bullpen.EINVALID},
		{"bad env name", map[string]any{"env": map[string]string{"1BAD": "x"}}, 400, bullpen.EINVALID},
		{"huge env", map[string]any{"env": hugeEnv}, 413, bullpen.ETOOLARGE},
		{"bad secret file", map[string]any{"secrets": []map[string]string{{"name": "K", "value": "v", "file": "rel"}}}, 400, bullpen.EINVALID},
		{"bad CIDR", map[string]any{"network": map[string]any{"allow": []string{"10.0.0.0/99"}}}, 400, bullpen.EINVALID},
		{"IPv6 allowlist", map[string]any{"network": map[string]any{"allow": []string{"::1/128"}}}, 501, bullpen.EUNSUPPORTED},
		{"bad domain", map[string]any{"network": map[string]any{"domains": []string{"-bad-.example"}}}, 400, bullpen.EINVALID},
		{"unknown network field", map[string]any{"network": map[string]any{"open": true}}, 400, bullpen.EINVALID},
		{"bad port", map[string]any{"ports": []int{70000}}, 400, bullpen.EINVALID},
		{"reserved tag", map[string]any{"tags": map[string]string{"bullpen.agent": "x"}}, 400, bullpen.EINVALID},
		{"bad tag", map[string]any{"tags": map[string]string{"bad key": "x"}}, 400, bullpen.EINVALID},
	}
	for _, c := range cases {
		var e apiError
		st := s.do("POST", "/api/v1/sandboxes", s.Token, c.body, &e)
		wantError(t, c.name, st, e, c.status, c.code)
		if strings.Contains(e.Error.Message, "bullpen:") || strings.Contains(e.Error.Message, "sandbox:") {
			t.Errorf("%s: message leaks internals: %q", c.name, e.Error.Message)
		}
	}
	var page struct{ Items []sbView }
	if s.do("GET", "/api/v1/sandboxes", s.Token, nil, &page); len(page.Items) != 0 {
		t.Errorf("bad specs left %d sandboxes", len(page.Items))
	}
	// A name the member uses already is a conflict (names are per owner:
	// see TestSandboxNamesArePerOwner).
	s.create(s.Token, map[string]any{"name": "taken"})
	var e apiError
	st := s.do("POST", "/api/v1/sandboxes", s.Token, map[string]any{"name": "taken"}, &e)
	wantError(t, "taken name", st, e, 409, bullpen.ECONFLICT)
	// Bad ids, actions and ports.
	st = s.do("GET", "/api/v1/sandboxes/"+strings.Repeat("x", 300), s.Token, nil, &e)
	wantError(t, "long id", st, e, 400, bullpen.EINVALID)
	st = s.do("DELETE", "/api/v1/sandboxes/sb_0000000000000000", s.Token, nil, &e)
	wantError(t, "terminate unknown", st, e, 404, bullpen.ENOTFOUND)
	st = s.do("POST", "/api/v1/sandboxes/taken/levitate", s.Token, nil, &e)
	wantError(t, "unknown action", st, e, 404, bullpen.ENOTFOUND)
	st = s.do("POST", "/api/v1/sandboxes/taken/ports", s.Token, map[string]any{"port": 0}, &e)
	wantError(t, "port 0", st, e, 400, bullpen.EINVALID)
	st = s.do("DELETE", "/api/v1/sandboxes/taken/ports/abc", s.Token, nil, &e)
	wantError(t, "revoke port abc", st, e, 400, bullpen.EINVALID)
	st = s.do("GET", "/api/v1/sandboxes?tag=novalue", s.Token, nil, &e)
	wantError(t, "tag filter without =", st, e, 400, bullpen.EINVALID)
	st = s.do("POST", "/api/v1/sandboxes/taken/snapshot", s.Token, map[string]any{"name": "bad name"}, &e)
	wantError(t, "snapshot with a bad name", st, e, 400, bullpen.EINVALID)
	st = s.do("POST", "/api/v1/sandboxes/taken/run", s.Token, map[string]any{"cmd": "true", "stdin": "a", "stdin_b64": "YQ=="}, &e)
	wantError(t, "stdin twice", st, e, 400, bullpen.EINVALID)
	st = s.do("POST", "/api/v1/sandboxes/taken/run", s.Token, map[string]any{"cmd": "true", "env": map[string]string{"A": "x\x00y"}}, &e)
	wantError(t, "NUL in env", st, e, 400, bullpen.EINVALID)
}

// With request bodies streamed, JSON endpoints still refuse oversized
// bodies: by Content-Length before reading, and chunked ones at the limit.
func TestSandboxBodyLimits(t *testing.T) {
	s := newSandboxServer(t, web.Config{BodyLimit: 64 << 10})
	big := bytes.Repeat([]byte("x"), 1<<20)

	resp := s.req("POST", "/api/v1/sandboxes", s.Token, bytes.NewReader(big), "application/json")
	if got := readAll(t, resp); resp.StatusCode != 413 || !strings.Contains(got, `"too_large"`) {
		t.Errorf("1 MiB with Content-Length = %d %s", resp.StatusCode, got)
	}
	// Far over the limit, the server stops reading: the client gets the 413
	// or, if it is still sending, a closed connection; never a success.
	huge := io.LimitReader(zeros{}, 64<<20)
	r, _ := http.NewRequest("POST", s.URL+"/api/v1/sandboxes", huge)
	r.ContentLength = 64 << 20
	r.Header.Set("Authorization", "Bearer "+s.Token)
	if resp, err := http.DefaultClient.Do(r); err == nil {
		if got := readAll(t, resp); resp.StatusCode != 413 {
			t.Errorf("64 MiB with Content-Length = %d %s", resp.StatusCode, got)
		}
	}
	// Chunked (no Content-Length): io.MultiReader hides the length.
	resp = s.req("POST", "/api/v1/channels", s.Token, io.MultiReader(bytes.NewReader(big)), "application/json")
	if got := readAll(t, resp); resp.StatusCode != 413 || !strings.Contains(got, `"too_large"`) {
		t.Errorf("1 MiB chunked = %d %s", resp.StatusCode, got)
	}
	// Small bodies, chunked or not, still work, and a big JSON body within
	// the server limit gets the API's own 256 KiB rule.
	resp = s.req("POST", "/api/v1/channels", s.Token, io.MultiReader(strings.NewReader(`{"name":"chunked"}`)), "application/json")
	if got := readAll(t, resp); resp.StatusCode != 201 {
		t.Errorf("small chunked body = %d %s", resp.StatusCode, got)
	}
	// Login forms are bounded too.
	resp = s.req("POST", "/login", "", io.MultiReader(bytes.NewReader(big)), "application/x-www-form-urlencoded")
	if resp.StatusCode != 413 {
		t.Errorf("1 MiB login form = %d", resp.StatusCode)
	}
	resp.Body.Close()
	// Through a cookie session, uploads stream (with the CSRF header), but a
	// form body never does: the CSRF check may parse it.
	b := s.login(s.Token)
	sb := s.create(s.Token, map[string]any{})
	upload := func(ct string, csrf bool) int {
		req, _ := http.NewRequest("PUT", s.URL+"/api/v1/sandboxes/"+sb.ID+"/files?path=up.bin", bytes.NewReader(big))
		req.Header.Set("Content-Type", ct)
		if csrf {
			req.Header.Set("X-CSRF-Token", b.csrf)
		}
		resp, err := b.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := upload("application/octet-stream", true); st != 201 {
		t.Errorf("1 MiB upload with a cookie and CSRF header = %d, want 201", st)
	}
	if st := upload("application/octet-stream", false); st != 403 {
		t.Errorf("upload without the CSRF header = %d, want 403", st)
	}
	if st := upload("multipart/form-data; boundary=xyz", false); st != 400 {
		t.Errorf("1 MiB multipart upload without the CSRF header = %d, want 400 (raw bytes, not a form)", st)
	}
	// The server is fine afterwards.
	if st := s.do("GET", "/api/v1/me", s.Token, nil, nil); st != 200 {
		t.Errorf("me = %d", st)
	}
}

// Ports: publish, reach the sandbox's server through the host address,
// list, revoke.
func TestSandboxPorts(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.Token, map[string]any{})
	s.run(s.Token, sb.ID, "mkdir www && echo served > www/index.html && (cd www && nohup python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 &)")
	var p struct {
		Port     int    `json:"port"`
		HostAddr string `json:"host_addr"`
	}
	if st := s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/ports", s.Token, map[string]any{"port": 8000}, &p); st != 201 || p.Port != 8000 || p.HostAddr == "" {
		t.Fatalf("publish = %d %+v", st, p)
	}
	var body string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get("http://" + p.HostAddr + "/index.html"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if body = string(b); resp.StatusCode == 200 {
				break
			}
		}
	}
	if body != "served\n" {
		t.Errorf("through the published port: %q", body)
	}
	var page struct {
		Items []struct{ Port int }
	}
	if st := s.do("GET", "/api/v1/sandboxes/"+sb.ID+"/ports", s.Token, nil, &page); st != 200 || len(page.Items) != 1 {
		t.Errorf("list ports = %d %+v", st, page)
	}
	if st := s.do("DELETE", "/api/v1/sandboxes/"+sb.ID+"/ports/8000", s.Token, nil, nil); st != 204 {
		t.Errorf("revoke = %d", st)
	}
	if _, err := http.Get("http://" + p.HostAddr + "/"); err == nil {
		t.Errorf("the port still answers after revoke")
	}
	var e apiError
	st := s.do("DELETE", "/api/v1/sandboxes/"+sb.ID+"/ports/8000", s.Token, nil, &e)
	wantError(t, "revoke twice", st, e, 404, bullpen.ENOTFOUND)
}

// Images: import a tarball (streamed upload), pull from a registry, list,
// run a sandbox on one, refuse to remove it while used, remove it.
func TestSandboxImages(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	img, err := random.Image(512, 2)
	if err != nil {
		t.Fatal(err)
	}
	tarPath := filepath.Join(t.TempDir(), "img.tar")
	if err := tarball.WriteToFile(tarPath, name.MustParseReference("test/random:1"), img); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	resp := s.req("POST", "/api/v1/images/import?name=team/random:1", s.Token, f, "application/x-tar")
	if got := readAll(t, resp); resp.StatusCode != 201 || !strings.Contains(got, `"team/random:1"`) {
		t.Fatalf("import = %d %s", resp.StatusCode, got)
	}
	resp = s.req("POST", "/api/v1/images/import?name=junk", s.Token, strings.NewReader("not a tarball"), "application/x-tar")
	if got := readAll(t, resp); resp.StatusCode != 400 {
		t.Errorf("import junk = %d %s", resp.StatusCode, got)
	}
	resp = s.req("POST", "/api/v1/images/import?name=bad%20name", s.Token, strings.NewReader("x"), "application/x-tar")
	if got := readAll(t, resp); resp.StatusCode != 400 {
		t.Errorf("import with a bad name = %d %s", resp.StatusCode, got)
	}

	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	ref := strings.TrimPrefix(reg.URL, "http://") + "/team/pulled:2"
	pref, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(pref, img, remote.WithContext(context.Background())); err != nil {
		t.Fatal(err)
	}
	var pulled struct {
		ID    string   `json:"id"`
		Names []string `json:"names"`
	}
	if st := s.do("POST", "/api/v1/images/pull", s.Token, map[string]any{"ref": ref, "name": "pulled"}, &pulled); st != 201 || pulled.Names[0] != "pulled" {
		t.Fatalf("pull = %d %+v", st, pulled)
	}
	var e apiError
	st := s.do("POST", "/api/v1/images/pull", s.Token, map[string]any{"ref": "::bad::"}, &e)
	wantError(t, "pull a bad ref", st, e, 400, bullpen.EINVALID)
	var imgs struct{ Items []struct{ Names []string } }
	if st := s.do("GET", "/api/v1/images", s.BobToken, nil, &imgs); st != 200 || len(imgs.Items) != 1 || len(imgs.Items[0].Names) != 2 {
		t.Errorf("list images = %d %+v", st, imgs.Items)
	}

	sb := s.create(s.Token, map[string]any{"image": "team/random:1"})
	st = s.do("DELETE", "/api/v1/images/pulled", s.Token, nil, &e)
	wantError(t, "remove an image in use (by another name)", st, e, 409, bullpen.ECONFLICT)
	s.do("DELETE", "/api/v1/sandboxes/"+sb.ID, s.Token, nil, nil)
	if st := s.do("DELETE", "/api/v1/images/pulled", s.Token, nil, nil); st != 204 {
		t.Errorf("remove = %d", st)
	}
	// One image had both names; both are gone.
	st = s.do("DELETE", "/api/v1/images/team/random:1", s.Token, nil, &e)
	wantError(t, "remove by the other name", st, e, 404, bullpen.ENOTFOUND)
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
