package e2b

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// BaseTemplate is the E2B template that is Bullpen's host-tools base
// image; any other template names a Bullpen image.
const BaseTemplate = "base"

// apiRoutes is the control plane, as the E2B SDKs call it.
func (s *Server) apiRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/sandboxes", s.create)
	mux.HandleFunc("POST /sandboxes", s.create)
	mux.HandleFunc("GET /v2/sandboxes", s.list)
	mux.HandleFunc("GET /sandboxes", s.list)
	mux.HandleFunc("GET /sandboxes/{id}", s.get)
	mux.HandleFunc("DELETE /sandboxes/{id}", s.kill)
	mux.HandleFunc("POST /sandboxes/{id}/timeout", s.setTimeout)
	mux.HandleFunc("POST /sandboxes/{id}/pause", s.pause)
	mux.HandleFunc("POST /sandboxes/{id}/resume", s.resume)
	mux.HandleFunc("POST /v2/sandboxes/{id}/connect", s.connect)
	mux.HandleFunc("POST /sandboxes/{id}/connect", s.connect)
	mux.HandleFunc("GET /sandboxes/{id}/metrics", s.metrics)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, bullpen.Errorf(bullpen.ENOTFOUND, "%s %s is not part of Bullpen's E2B-compatible API (see docs/e2b.md)", r.Method, r.URL.Path))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.authenticate(w, r, r.Header.Get("X-API-KEY"), s.writeError, mux.ServeHTTP)
	})
}

// sandboxOut is a created or connected sandbox, as E2B answers it. The
// envd access token is the API key the request carried: the sandbox side
// takes the same keys (X-Access-Token), so it acts as the same member.
type sandboxOut struct {
	TemplateID      string  `json:"templateID"`
	SandboxID       string  `json:"sandboxID"`
	Alias           string  `json:"alias,omitempty"`
	ClientID        string  `json:"clientID"`
	EnvdVersion     string  `json:"envdVersion"`
	EnvdAccessToken string  `json:"envdAccessToken,omitempty"`
	Domain          *string `json:"domain"`
}

// detailOut is a sandbox as E2B's get and list answer it.
type detailOut struct {
	TemplateID          string            `json:"templateID"`
	SandboxID           string            `json:"sandboxID"`
	Alias               string            `json:"alias,omitempty"`
	ClientID            string            `json:"clientID"`
	StartedAt           time.Time         `json:"startedAt"`
	EndAt               time.Time         `json:"endAt"`
	CPUCount            int               `json:"cpuCount"`
	MemoryMB            int64             `json:"memoryMB"`
	DiskSizeMB          int64             `json:"diskSizeMB"`
	Metadata            map[string]string `json:"metadata"`
	State               string            `json:"state"`
	EnvdVersion         string            `json:"envdVersion"`
	AllowInternetAccess bool              `json:"allowInternetAccess"`
	Domain              *string           `json:"domain"`
}

// templateOf is the E2B template a sandbox was made from.
func templateOf(in sandbox.Info) string {
	if in.Image == "" || in.Image == "host" {
		return BaseTemplate
	}
	return in.Image
}

// stateOf maps Bullpen's states to E2B's two: a stopped sandbox (files
// kept, processes ended) is "paused", since connecting resumes it.
func stateOf(st sandbox.State) string {
	if st == sandbox.StateRunning {
		return "running"
	}
	return "paused"
}

func (s *Server) out(r *http.Request, in sandbox.Info) sandboxOut {
	return sandboxOut{TemplateID: templateOf(in), SandboxID: in.ID, Alias: bullpen.SandboxName(in.Name, in.Tags),
		ClientID: "bullpen", EnvdVersion: EnvdVersion, EnvdAccessToken: requestKey(r.Context())}
}

func detail(in sandbox.Info) detailOut {
	started := in.StartedAt
	if started.IsZero() {
		started = in.CreatedAt
	}
	md := bullpen.SandboxUserTags(in.Tags)
	if md == nil {
		md = map[string]string{}
	}
	return detailOut{TemplateID: templateOf(in), SandboxID: in.ID, Alias: bullpen.SandboxName(in.Name, in.Tags), ClientID: "bullpen",
		StartedAt: started.UTC(), EndAt: in.ExpiresAt.UTC(), CPUCount: int(math.Ceil(in.CPU)), MemoryMB: in.MemoryBytes >> 20,
		DiskSizeMB: in.DiskBytes >> 20, Metadata: md, State: stateOf(in.State), EnvdVersion: EnvdVersion,
		AllowInternetAccess: len(in.Network.Allow) > 0 || len(in.Network.Domains) > 0}
}

// decodeBody reads a JSON body (an empty one is {}) into v.
func decodeBody(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
	if err != nil {
		return bullpen.Errorf(bullpen.EINVALID, "could not read the request body")
	}
	if len(b) > 1<<20 {
		return bullpen.Errorf(bullpen.ETOOLARGE, "request body over 1 MiB")
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return bullpen.Errorf(bullpen.EINVALID, "request body is not valid JSON for this call: %s", clip(err.Error()))
	}
	return nil
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// createIn is the body of POST /v2/sandboxes.
type createIn struct {
	TemplateID          string            `json:"templateID"`
	Timeout             *int64            `json:"timeout"`
	Metadata            map[string]string `json:"metadata"`
	EnvVars             map[string]string `json:"envVars"`
	AllowInternetAccess *bool             `json:"allow_internet_access"`
	AutoPause           *bool             `json:"autoPause"`
	Secure              *bool             `json:"secure"`
	Network             json.RawMessage   `json:"network"`
	MCP                 json.RawMessage   `json:"mcp"`
	VolumeMounts        json.RawMessage   `json:"volumeMounts"`
}

// timeoutOf checks a timeout in seconds.
func timeoutOf(sec int64) (time.Duration, error) {
	if sec <= 0 || sec > int64(sandbox.MaxTimeout/time.Second) {
		return 0, bullpen.Errorf(bullpen.EINVALID, "timeout must be between 1 and %d seconds", int64(sandbox.MaxTimeout/time.Second))
	}
	return time.Duration(sec) * time.Second, nil
}

func present(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	return t != "" && t != "null" && t != "{}" && t != "[]"
}

// spec turns a create into a sandbox spec; what Bullpen cannot honour is
// refused, never ignored.
func (in createIn) spec(def time.Duration) (sandbox.Spec, error) {
	sp := sandbox.Spec{Image: in.TemplateID, Tags: in.Metadata, Env: in.EnvVars, Timeout: def}
	switch {
	case present(in.MCP):
		return sp, bullpen.Errorf(bullpen.EINVALID, "mcp is not supported by Bullpen's E2B-compatible API")
	case present(in.VolumeMounts):
		return sp, bullpen.Errorf(bullpen.EINVALID, "volumeMounts are not supported by Bullpen's E2B-compatible API")
	case present(in.Network):
		return sp, bullpen.Errorf(bullpen.EINVALID, "network rules are not supported by Bullpen's E2B-compatible API: use allow_internet_access, or Bullpen's native API for an allowlist")
	case in.AutoPause != nil && *in.AutoPause:
		return sp, bullpen.Errorf(bullpen.EINVALID, "autoPause is not supported: a Bullpen sandbox is terminated when its timeout passes")
	}
	if sp.Image == "" || sp.Image == BaseTemplate {
		sp.Image = "host"
	} else if sp.Image == "host" {
		return sp, bullpen.Errorf(bullpen.ENOTFOUND, "template %q not found (the host-tools base is template %q)", in.TemplateID, BaseTemplate)
	}
	if in.Timeout != nil {
		d, err := timeoutOf(*in.Timeout)
		if err != nil {
			return sp, err
		}
		sp.Timeout = d
	}
	if in.AllowInternetAccess != nil && *in.AllowInternetAccess {
		sp.Network = sandbox.NetworkPolicy{Allow: []string{"0.0.0.0/0"}}
	}
	return sp, nil
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var in createIn
	if err := decodeBody(r, &in); err != nil {
		s.writeError(w, err)
		return
	}
	sp, err := in.spec(s.cfg.DefaultTimeout)
	if err != nil {
		s.writeError(w, err)
		return
	}
	info, err := s.cfg.Boxes.Create(r.Context(), member(r.Context()), sp)
	if err != nil {
		if bullpen.IsCode(err, bullpen.ENOTFOUND) {
			err = bullpen.Errorf(bullpen.ENOTFOUND, "template %q not found: %s", in.TemplateID, bullpen.ErrorMessage(err))
		}
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, s.out(r, info))
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	info, err := s.getLive(r.Context(), member(r.Context()), r.PathValue("id"))
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, detail(info))
}

func (s *Server) kill(w http.ResponseWriter, r *http.Request) {
	if err := s.cfg.Boxes.Terminate(r.Context(), member(r.Context()), r.PathValue("id")); err != nil {
		s.writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) setTimeout(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Timeout *int64 `json:"timeout"`
	}
	if err := decodeBody(r, &in); err != nil {
		s.writeError(w, err)
		return
	}
	if in.Timeout == nil {
		s.writeError(w, bullpen.Errorf(bullpen.EINVALID, "timeout (seconds) is required"))
		return
	}
	d, err := timeoutOf(*in.Timeout)
	if err == nil {
		err = s.cfg.Boxes.SetTimeout(r.Context(), member(r.Context()), r.PathValue("id"), d)
	}
	if err != nil {
		s.writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// pause freezes a running sandbox (memory and files kept); pausing one
// that is not running is 409, as in E2B.
func (s *Server) pause(w http.ResponseWriter, r *http.Request) {
	if err := s.cfg.Boxes.Pause(r.Context(), member(r.Context()), r.PathValue("id")); err != nil {
		s.writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// wake brings a paused or stopped sandbox back, and sets its timeout when
// one is given. It reports whether the sandbox had to be woken.
func (s *Server) wake(r *http.Request, id string, timeout *int64) (sandbox.Info, bool, error) {
	ctx, me := r.Context(), member(r.Context())
	var d time.Duration
	if timeout != nil {
		var err error
		if d, err = timeoutOf(*timeout); err != nil {
			return sandbox.Info{}, false, err
		}
	}
	info, err := s.getLive(ctx, me, id)
	if err != nil {
		return info, false, err
	}
	woke := true
	switch info.State {
	case sandbox.StatePaused:
		err = s.cfg.Boxes.Resume(ctx, me, info.ID)
	case sandbox.StateStopped:
		err = s.cfg.Boxes.Start(ctx, me, info.ID)
	default:
		woke = false
	}
	if err == nil && d > 0 {
		err = s.cfg.Boxes.SetTimeout(ctx, me, info.ID, d)
	}
	if err != nil {
		return info, false, err
	}
	info, err = s.getLive(ctx, me, info.ID)
	return info, woke, err
}

type wakeIn struct {
	Timeout   *int64 `json:"timeout"`
	AutoPause *bool  `json:"autoPause"`
	Memory    *bool  `json:"memory"`
}

// connect resumes a paused sandbox, or just answers a running one: 201
// when it was woken, 200 when it was running.
func (s *Server) connect(w http.ResponseWriter, r *http.Request) {
	var in wakeIn
	if err := decodeBody(r, &in); err != nil {
		s.writeError(w, err)
		return
	}
	info, woke, err := s.wake(r, r.PathValue("id"), in.Timeout)
	if err != nil {
		s.writeError(w, err)
		return
	}
	st := http.StatusOK
	if woke {
		st = http.StatusCreated
	}
	writeJSON(w, st, s.out(r, info))
}

// resume is the older call: a running sandbox is 409.
func (s *Server) resume(w http.ResponseWriter, r *http.Request) {
	var in wakeIn
	if err := decodeBody(r, &in); err != nil {
		s.writeError(w, err)
		return
	}
	info, err := s.getLive(r.Context(), member(r.Context()), r.PathValue("id"))
	if err == nil && info.State == sandbox.StateRunning {
		err = bullpen.Errorf(bullpen.ECONFLICT, "sandbox %s is already running", info.ID)
	}
	if err == nil {
		info, _, err = s.wake(r, info.ID, in.Timeout)
	}
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, s.out(r, info))
}

// metricOut is one sample of E2B's metrics.
type metricOut struct {
	Timestamp     time.Time `json:"timestamp"`
	TimestampUnix int64     `json:"timestampUnix"`
	CPUUsedPct    float64   `json:"cpuUsedPct"`
	CPUCount      int       `json:"cpuCount"`
	MemUsed       int64     `json:"memUsed"`
	MemTotal      int64     `json:"memTotal"`
	DiskUsed      int64     `json:"diskUsed"`
	DiskTotal     int64     `json:"diskTotal"`
}

// metrics answers one sample, taken now: Bullpen keeps no series. Its CPU
// figure is the average use since the sandbox started.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	ctx, me := r.Context(), member(r.Context())
	info, err := s.getLive(ctx, me, r.PathValue("id"))
	var u sandbox.Usage
	if err == nil {
		u, err = s.cfg.Boxes.Stats(ctx, me, info.ID)
	}
	if err != nil {
		s.writeError(w, err)
		return
	}
	now := s.cfg.Now().UTC()
	m := metricOut{Timestamp: now, TimestampUnix: now.Unix(), CPUCount: int(math.Ceil(info.CPU)), MemUsed: u.MemoryBytes,
		MemTotal: info.MemoryBytes, DiskTotal: info.DiskBytes}
	if up := now.Sub(info.StartedAt).Seconds(); up > 0 && info.CPU > 0 && !info.StartedAt.IsZero() {
		m.CPUUsedPct = math.Min(100, 100*u.CPUSeconds/(up*info.CPU))
	}
	writeJSON(w, http.StatusOK, []metricOut{m})
}

// getLive finds a sandbox that is not terminated: E2B forgets a killed
// sandbox, where Bullpen still shows it by ID for a while.
func (s *Server) getLive(ctx context.Context, me bullpen.Member, id string) (sandbox.Info, error) {
	info, err := s.cfg.Boxes.Get(ctx, me, id)
	if err == nil && info.State == sandbox.StateTerminated {
		err = bullpen.Errorf(bullpen.ENOTFOUND, "sandbox %q not found", id)
	}
	return info, err
}
