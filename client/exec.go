package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ExecRequest is a command to run in a sandbox. Stdin is sent whole with
// the request (the server's body limit bounds it; larger input goes in a
// file first).
type ExecRequest struct {
	Cmd     []string          `json:"cmd"`
	Env     map[string]string `json:"env,omitempty"`
	Workdir string            `json:"workdir,omitempty"`
	Timeout time.Duration     `json:"-"`
	Stdin   []byte            `json:"-"`
}

// ExecResult is how a command ended.
type ExecResult struct {
	ExecID   string
	ExitCode int
	Signal   string
	TimedOut bool
	Duration time.Duration
}

// execLine is one line of the NDJSON exec stream.
type execLine struct {
	ExecID     string     `json:"exec_id"`
	Stream     string     `json:"stream"`
	Data       *string    `json:"data"`
	DataB64    []byte     `json:"data_b64"`
	Heartbeat  bool       `json:"heartbeat"`
	ExitCode   *int       `json:"exit_code"`
	Signal     *string    `json:"signal"`
	TimedOut   *bool      `json:"timed_out"`
	DurationMS *int64     `json:"duration_ms"`
	Error      *errorBody `json:"error"`
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// body is the JSON of an exec or run request.
func (r ExecRequest) body() map[string]any {
	in := map[string]any{"cmd": r.Cmd}
	if len(r.Env) > 0 {
		in["env"] = r.Env
	}
	if r.Workdir != "" {
		in["workdir"] = r.Workdir
	}
	if r.Timeout > 0 {
		in["timeout_ms"] = r.Timeout.Milliseconds()
	}
	if r.Stdin != nil {
		in["stdin_b64"] = r.Stdin
	}
	return in
}

// Exec runs a command and streams its output to stdout and stderr as it
// comes (nil writers discard). A command that ran returns its result
// whatever its exit code; the error is for commands that could not run.
func (c *Client) Exec(ctx context.Context, id string, req ExecRequest, stdout, stderr io.Writer) (ExecResult, error) {
	var res ExecResult
	path := p("/sandboxes/%v/exec", id)
	resp, err := c.jsonRequest(ctx, http.MethodPost, path, req.body(), "application/x-ndjson")
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var l execLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return res, fmt.Errorf("client: exec stream: %w", err)
		}
		switch {
		case l.ExecID != "":
			res.ExecID = l.ExecID
		case l.Error != nil:
			return res, &Error{Status: http.StatusOK, Code: l.Error.Code, Message: l.Error.Message}
		case l.ExitCode != nil:
			res.ExitCode = *l.ExitCode
			if l.Signal != nil {
				res.Signal = *l.Signal
			}
			res.TimedOut = l.TimedOut != nil && *l.TimedOut
			if l.DurationMS != nil {
				res.Duration = time.Duration(*l.DurationMS) * time.Millisecond
			}
			return res, nil
		case l.Data != nil || l.DataB64 != nil:
			if err := writeChunk(l, stdout, stderr); err != nil {
				return res, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return res, fmt.Errorf("client: exec stream: %w", err)
	}
	return res, fmt.Errorf("client: exec stream ended before the command did")
}

func writeChunk(l execLine, stdout, stderr io.Writer) error {
	w := stdout
	if l.Stream == "stderr" {
		w = stderr
	}
	if w == nil {
		return nil
	}
	data := l.DataB64
	if l.Data != nil {
		data = []byte(*l.Data)
	}
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("client: exec output: %w", err)
	}
	return nil
}

// RunResult is a command run to completion with its output captured
// (each stream up to the output limit).
type RunResult struct {
	ExitCode        int    `json:"exit_code"`
	Signal          string `json:"signal,omitempty"`
	TimedOut        bool   `json:"timed_out"`
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	StdoutB64       []byte `json:"stdout_b64,omitempty"`
	StderrB64       []byte `json:"stderr_b64,omitempty"`
	StdoutTruncated bool   `json:"stdout_truncated"`
	StderrTruncated bool   `json:"stderr_truncated"`
	StdoutBytes     int64  `json:"stdout_bytes"`
	StderrBytes     int64  `json:"stderr_bytes"`
	DurationMS      int64  `json:"duration_ms"`
}

// Run runs a command to completion and returns its captured output;
// outputLimit bounds each stream (0: the server's default, 1 MiB).
func (c *Client) Run(ctx context.Context, id string, req ExecRequest, outputLimit int64) (RunResult, error) {
	in := req.body()
	if outputLimit > 0 {
		in["output_limit"] = outputLimit
	}
	return send[RunResult](ctx, c, http.MethodPost, p("/sandboxes/%v/run", id), in)
}

// jsonRequest sends in as JSON and returns the streaming response.
func (c *Client) jsonRequest(ctx context.Context, method, path string, in any, accept string) (*http.Response, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: encode: %w", method, path, err)
	}
	return c.requestAccept(ctx, method, path, nil, bytesReader(b), "application/json", accept)
}
