package web_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/image"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/timeline"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/wiki"
)

// TestMain lets the test binary serve as the sandboxes' init.
func TestMain(m *testing.M) {
	sandbox.MaybeRunInit()
	os.Exit(runValidated(m))
}

// sbServer is a real server with real sandboxes, and a second member.
type sbServer struct {
	*testServer
	Svc      *sandboxes.Service
	stateDir string
	Bob      bullpen.Member
	BobToken string
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("sandbox API tests need root (namespaces, cgroups, overlayfs)")
	}
}

// newSandboxServer starts a server whose sandboxes live in a temp dir.
// Cleanup terminates them all and checks that nothing is left on the
// host: no mount, cgroup or state directory of any sandbox.
func newSandboxServer(t *testing.T, cfg web.Config) *sbServer {
	return newSandboxServerWith(t, cfg, sandboxes.Config{}, nil)
}

// newSandboxServerWith is newSandboxServer with the service's config
// adjusted and, when withAgents is set, an agents service (made by it from
// the office and the sandboxes) behind the API too.
func newSandboxServerWith(t *testing.T, cfg web.Config, sc sandboxes.Config,
	withAgents func(*store.DB, *office.Office, *sandboxes.Service) *agents.Service) *sbServer {
	t.Helper()
	needRoot(t)
	ctx := context.Background()
	db, off, token := openOffice(t, store.SQLite)
	images, err := image.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	sc.Office, sc.DB, sc.Images = off, db, images
	sc.Sandbox.StateDir, sc.Sandbox.CheckInterval = state, 100*time.Millisecond // the limits a test set stay
	if sc.MaxPerMember == 0 {
		sc.MaxPerMember = 4
	}
	svc, err := sandboxes.Open(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	s := &sbServer{Svc: svc, stateDir: state}
	services := web.Services{Office: off, Sandboxes: svc, Wiki: wiki.New(db, wiki.Config{}), // the dashboard's wiki panel loads too
		Timeline: timeline.Lines{}}
	var ag *agents.Service
	if withAgents != nil {
		ag = withAgents(db, off, svc)
		services.Agents = ag
	}
	s.testServer = serve(t, db, off, token, cfg, services, func() {
		if ag != nil {
			ag.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ids := s.allIDs()
		if err := svc.Manager().TerminateAll(ctx); err != nil {
			t.Errorf("TerminateAll: %v", err)
		}
		svc.Close()
		s.checkNoLeaks(ids)
	})
	s.Bob, s.BobToken = s.addMember("bob", false)
	return s
}

// addMember creates a human (or an agent) member and a token for it.
func (s *sbServer) addMember(handle string, agent bool) (bullpen.Member, string) {
	s.t.Helper()
	kind := bullpen.KindHuman
	if agent {
		kind = bullpen.KindAgent
	}
	var m bullpen.Member
	if st := s.do("POST", "/api/v1/members", s.Token, map[string]any{"handle": handle, "display_name": handle, "kind": kind}, &m); st != 201 {
		s.t.Fatalf("create member %s: %d", handle, st)
	}
	var tok struct {
		Token string `json:"token"`
	}
	if st := s.do("POST", "/api/v1/tokens", s.Token, map[string]any{"member_id": m.ID, "name": "test"}, &tok); st != 201 {
		s.t.Fatalf("create token for %s: %d", handle, st)
	}
	return m, tok.Token
}

func (s *sbServer) allIDs() []string {
	infos, _ := s.Svc.Manager().List(context.Background(), nil)
	var ids []string
	for _, in := range infos {
		ids = append(ids, in.ID)
	}
	return ids
}

// checkNoLeaks looks for anything of the given sandboxes left on the host.
func (s *sbServer) checkNoLeaks(ids []string) {
	t := s.t
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mi), s.stateDir) {
		t.Errorf("a mount under the state dir %s is left", s.stateDir)
	}
	// The sandboxes' mounts live in the Manager's own mount namespace,
	// which the host keeps through one bind in the run dir while any
	// sandbox is left; after the last one and Close it must be gone.
	sum := sha256.Sum256([]byte(s.stateDir))
	if run := "/run/bullpen-sandbox/" + hex.EncodeToString(sum[:6]); strings.Contains(string(mi), run) {
		t.Errorf("the sandboxes' mount namespace is still kept at %s after Close", run)
	}
	for _, id := range ids {
		if strings.Contains(string(mi), id) {
			t.Errorf("%s: mount left", id)
		}
		cgs, _ := filepath.Glob("/sys/fs/cgroup/*/bullpen-sandbox/" + id)
		cg2, _ := filepath.Glob("/sys/fs/cgroup/bullpen-sandbox/" + id)
		if len(cgs)+len(cg2) > 0 {
			t.Errorf("%s: cgroups left: %v", id, append(cgs, cg2...))
		}
	}
	left, _ := os.ReadDir(filepath.Join(s.stateDir, "sandboxes"))
	if len(left) > 0 {
		t.Errorf("sandbox state dirs left: %d", len(left))
	}
}

// create makes a sandbox through the API as the holder of token.
func (s *sbServer) create(token string, spec map[string]any) sbView {
	s.t.Helper()
	var raw json.RawMessage
	body, _ := json.Marshal(spec)
	if st := s.do("POST", "/api/v1/sandboxes", token, body, &raw); st != http.StatusCreated {
		s.t.Fatalf("create sandbox %s: %d %s", body, st, raw)
	}
	var v sbView
	if err := json.Unmarshal(raw, &v); err != nil {
		s.t.Fatal(err)
	}
	return v
}

// sbView is the API's sandbox, as the tests read it.
type sbView struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	OwnerID     int64             `json:"owner_id"`
	Tags        map[string]string `json:"tags"`
	Image       string            `json:"image"`
	State       string            `json:"state"`
	Workdir     string            `json:"workdir"`
	MemoryBytes int64             `json:"memory_bytes"`
	Env         map[string]string `json:"env"`
	SecretNames []string          `json:"secret_names"`
	Timeout     float64           `json:"timeout"`
	Usage       *sandbox.Usage    `json:"usage"`
}

// req sends a request with a streamed body and returns the response.
func (s *sbServer) req(method, path, token string, body io.Reader, contentType string) *http.Response {
	s.t.Helper()
	r, err := http.NewRequest(method, s.URL+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// execLine is one NDJSON line of an exec stream.
type execLine struct {
	ExecID     string  `json:"exec_id"`
	Stream     string  `json:"stream"`
	Off        *int64  `json:"off"`
	Data       *string `json:"data"`
	DataB64    []byte  `json:"data_b64"`
	Heartbeat  bool    `json:"heartbeat"`
	ExitCode   *int    `json:"exit_code"`
	Signal     string  `json:"signal"`
	TimedOut   bool    `json:"timed_out"`
	DurationMS int64   `json:"duration_ms"`
	Error      *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// execResult is an exec stream put together.
type execResult struct {
	ExecID         string
	Stdout, Stderr []byte
	End            execLine
	Lines          int
}

// exec runs a command through the streaming endpoint and collects it.
func (s *sbServer) exec(token, id string, body map[string]any) execResult {
	s.t.Helper()
	raw, _ := json.Marshal(body)
	resp := s.req("POST", "/api/v1/sandboxes/"+id+"/exec", token, strings.NewReader(string(raw)), "application/json")
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		s.t.Fatalf("exec %s: %d %s", raw, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		s.t.Errorf("exec Content-Type %q", ct)
	}
	var r execResult
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		var l execLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			s.t.Fatalf("exec line %q: %v", sc.Text(), err)
		}
		r.Lines++
		switch {
		case l.ExecID != "":
			r.ExecID = l.ExecID
		case l.Stream != "":
			data := l.DataB64
			if l.Data != nil {
				data = []byte(*l.Data)
			}
			dst := &r.Stdout
			if l.Stream == "stderr" {
				dst = &r.Stderr
			}
			if *l.Off != int64(len(*dst)) {
				s.t.Errorf("chunk at offset %d, have %d bytes of %s", *l.Off, len(*dst), l.Stream)
			}
			*dst = append(*dst, data...)
		case l.ExitCode != nil || l.Error != nil:
			r.End = l
		}
	}
	if r.End.ExitCode == nil && r.End.Error == nil {
		s.t.Fatalf("exec stream ended without an exit status")
	}
	return r
}

// run uses the sync endpoint.
func (s *sbServer) run(token, id, cmd string) (stdout string, code int) {
	s.t.Helper()
	var out struct {
		Stdout   string `json:"stdout"`
		ExitCode int    `json:"exit_code"`
	}
	if st := s.do("POST", "/api/v1/sandboxes/"+id+"/run", token, map[string]any{"cmd": cmd}, &out); st != 200 {
		s.t.Fatalf("run %q: %d", cmd, st)
	}
	return out.Stdout, out.ExitCode
}

// wantError checks an API error response's status and code.
func wantError(t *testing.T, what string, st int, e apiError, status int, code string) {
	t.Helper()
	if st != status || e.Error.Code != code || e.Error.Message == "" {
		t.Errorf("%s = %d %q %q, want %d %s with a message", what, st, e.Error.Code, e.Error.Message, status, code)
	}
}
