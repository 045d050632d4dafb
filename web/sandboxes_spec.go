package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// specIn is the body of POST /api/v1/sandboxes.
type specIn struct {
	Image       string             `json:"image"`
	Name        string             `json:"name"`
	Tags        map[string]string  `json:"tags"`
	Workdir     string             `json:"workdir"`
	CPU         float64            `json:"cpu"`
	Memory      byteSize           `json:"memory"`
	Pids        int64              `json:"pids"`
	Disk        byteSize           `json:"disk"`
	Env         map[string]string  `json:"env"`
	Secrets     []secretIn         `json:"secrets"`
	Timeout     seconds            `json:"timeout"`
	IdleTimeout seconds            `json:"idle_timeout"`
	IdleAction  sandbox.IdleAction `json:"idle_action"`
	Network     networkIn          `json:"network"`
	Ports       []int              `json:"ports"`
}

// secretIn is a secret to inject: as env, or as a file when File is set.
type secretIn struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	File  string `json:"file"`
}

func (in specIn) spec() (sandbox.Spec, error) {
	sp := sandbox.Spec{Image: in.Image, Name: in.Name, Tags: in.Tags, Workdir: in.Workdir, CPU: in.CPU,
		MemoryBytes: int64(in.Memory), Pids: in.Pids, DiskBytes: int64(in.Disk), Env: in.Env,
		Timeout: time.Duration(in.Timeout), IdleTimeout: time.Duration(in.IdleTimeout), IdleAction: in.IdleAction,
		Network: sandbox.NetworkPolicy(in.Network), Ports: in.Ports}
	for _, sec := range in.Secrets {
		sp.Secrets = append(sp.Secrets, sandbox.Secret{Name: sec.Name, Value: sec.Value, File: sec.File})
	}
	return sp, nil
}

// networkIn is a network policy as a request gives it: "none" (no
// network, the default), "open" (egress anywhere but the host and other
// sandboxes, as a role's network: open gives), or the allowlist object
// {"allow":[CIDRs],"domains":[names]}.
type networkIn sandbox.NetworkPolicy

// UnmarshalJSON implements json.Unmarshaler.
func (n *networkIn) UnmarshalJSON(raw []byte) error {
	if bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch s {
		case bullpen.NetworkNone:
			*n = networkIn{}
		case bullpen.NetworkOpen:
			*n = networkIn{Allow: []string{"0.0.0.0/0"}}
		default:
			return fmt.Errorf("network %q is not \"none\", \"open\" or an object {\"allow\":[…],\"domains\":[…]}", clipString(s, 40))
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var p sandbox.NetworkPolicy
	if err := dec.Decode(&p); err != nil {
		return errors.New("network must be \"none\", \"open\" or an object {\"allow\":[CIDRs],\"domains\":[host names]}")
	}
	*n = networkIn(p)
	return nil
}

// byteSize is a size in bytes: a JSON number, or a string with an optional
// unit: "512Mi", "1G", "64k", "1048576".
type byteSize int64

var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"ki", 1 << 10}, {"mi", 1 << 20}, {"gi", 1 << 30}, {"ti", 1 << 40},
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"t", 1e12},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"b", 1},
}

// UnmarshalJSON implements json.Unmarshaler.
func (b *byteSize) UnmarshalJSON(raw []byte) error {
	if bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var n float64
	if err := json.Unmarshal(raw, &n); err == nil {
		return b.set(n, string(raw))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return errors.New("a size must be a number of bytes or a string such as \"512Mi\"")
	}
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range sizeUnits {
		if num, ok := strings.CutSuffix(t, u.suffix); ok && num != "" && strings.IndexAny(num[len(num)-1:], "0123456789.") == 0 {
			t, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return fmt.Errorf("size %q is not a number with an optional unit (k, M, G, Ki, Mi, Gi)", clipString(s, 40))
	}
	return b.set(n*mult, s)
}

func (b *byteSize) set(n float64, text string) error {
	if math.IsNaN(n) || math.IsInf(n, 0) || n > 1<<62 || n < -(1<<62) {
		return fmt.Errorf("size %s is out of range", clipString(text, 40))
	}
	*b = byteSize(n)
	return nil
}

// seconds is a duration: a JSON number of seconds, or a Go duration string
// such as "90s" or "1h30m".
type seconds time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *seconds) UnmarshalJSON(raw []byte) error {
	if bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var n float64
	if err := json.Unmarshal(raw, &n); err == nil {
		if math.IsNaN(n) || n > 1e9 || n < -1e9 {
			return fmt.Errorf("duration %s is out of range", clipString(string(raw), 40))
		}
		*d = seconds(n * float64(time.Second))
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return errors.New("a duration must be a number of seconds or a string such as \"10m\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q is not valid (e.g. \"90s\", \"1h\")", clipString(s, 40))
	}
	*d = seconds(v)
	return nil
}

func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// command is a command line: a JSON array of arguments, or a string that
// /bin/sh -c runs.
type command []string

// UnmarshalJSON implements json.Unmarshaler.
func (c *command) UnmarshalJSON(raw []byte) error {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if strings.TrimSpace(s) == "" {
			return errors.New("cmd is empty")
		}
		*c = command{"/bin/sh", "-c", s}
		return nil
	}
	var args []string
	if err := json.Unmarshal(raw, &args); err != nil {
		return errors.New("cmd must be an array of strings, or a string for /bin/sh -c")
	}
	*c = args
	return nil
}

// execIn is the body of exec and run requests (and the first websocket
// message of an interactive exec).
type execIn struct {
	Cmd       command           `json:"cmd"`
	Env       map[string]string `json:"env"`
	Workdir   string            `json:"workdir"`
	TimeoutMS int64             `json:"timeout_ms"`
	Stdin     *string           `json:"stdin"`
	StdinB64  []byte            `json:"stdin_b64"`
	// PTY runs the command on a terminal of this size (the exec
	// websocket only).
	PTY *ptySize `json:"pty"`
}

// ptySize is a terminal's size in characters.
type ptySize struct {
	Rows int `json:"rows"`
	Cols int `json:"cols"`
}

func (in execIn) request() (sandbox.ExecRequest, error) {
	if in.TimeoutMS < 0 || in.TimeoutMS > 7*24*3600*1000 {
		return sandbox.ExecRequest{}, bullpen.Errorf(bullpen.EINVALID, "timeout_ms must be between 0 and one week")
	}
	req := sandbox.ExecRequest{Cmd: in.Cmd, Env: in.Env, Workdir: in.Workdir, Timeout: time.Duration(in.TimeoutMS) * time.Millisecond}
	if in.PTY != nil {
		req.PTY = &sandbox.PTYSize{Rows: in.PTY.Rows, Cols: in.PTY.Cols}
	}
	switch {
	case in.Stdin != nil && in.StdinB64 != nil:
		return req, bullpen.Errorf(bullpen.EINVALID, "send stdin or stdin_b64, not both")
	case in.Stdin != nil:
		req.Stdin = strings.NewReader(*in.Stdin)
	case in.StdinB64 != nil:
		req.Stdin = bytes.NewReader(in.StdinB64)
	}
	return req, nil
}
