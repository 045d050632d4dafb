package web

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/gofiber/fiber/v2"
)

// SandboxRun is what the run-to-completion handler calls.
type SandboxRun interface {
	Run(ctx context.Context, actor bullpen.Member, id string, req sandbox.ExecRequest, outputLimit int64) (bullpen.SandboxRunResult, error)
}

// runIn is the body of POST …/run: a command and how much of each stream
// to capture (output_limit bytes; default and maximum set by the server).
type runIn struct {
	execIn
	OutputLimit int64 `json:"output_limit"`
}

// runSandbox runs a command to completion: {exit_code, …, stdout, stderr};
// output that is not valid UTF-8 comes as stdout_b64 / stderr_b64. Each
// stream is captured up to the output limit (stdout_truncated and
// stdout_bytes tell what was dropped); the answer is written out as it is
// encoded, never held whole.
func (s *Server) runSandbox(c *fiber.Ctx) error {
	var in runIn
	if err := decode(c, &in); err != nil {
		return err
	}
	req, err := in.request()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	rr, err := s.sb.run.Run(ctx, actor(c), c.Params("id"), req, in.OutputLimit)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) { _ = writeRunResult(w, rr) })
	return nil
}

// writeRunResult writes rr as one JSON object, the output in pieces.
func writeRunResult(w *bufio.Writer, rr bullpen.SandboxRunResult) error {
	head := map[string]any{"exit_code": rr.ExitCode, "timed_out": rr.TimedOut, "truncated": rr.Truncated,
		"stdout_truncated": rr.StdoutTruncated, "stderr_truncated": rr.StderrTruncated,
		"stdout_bytes": rr.StdoutBytes, "stderr_bytes": rr.StderrBytes, "duration_ms": rr.Duration.Milliseconds()}
	if rr.Signal != "" {
		head["signal"] = rr.Signal
	}
	b, err := json.Marshal(head)
	if err != nil {
		return err
	}
	w.Write(b[:len(b)-1]) // the object stays open for the output
	writeOutput(w, "stdout", rr.Stdout)
	writeOutput(w, "stderr", rr.Stderr)
	w.WriteByte('}')
	return w.Flush()
}

// writeOutput writes `,"name":"…"` (or name_b64 when b is not UTF-8),
// escaping 32 KiB at a time.
func writeOutput(w *bufio.Writer, name string, b []byte) {
	if !utf8.Valid(b) {
		w.WriteString(`,"` + name + `_b64":"`)
		enc := base64.NewEncoder(base64.StdEncoding, w)
		enc.Write(b)
		enc.Close()
		w.WriteByte('"')
		return
	}
	w.WriteString(`,` + strconv.Quote(name) + `:"`)
	for len(b) > 0 {
		n := min(len(b), 32<<10)
		n -= partialUTF8(b[:n])
		q, _ := json.Marshal(string(b[:n]))
		w.Write(q[1 : len(q)-1])
		b = b[n:]
	}
	w.WriteByte('"')
}

// partialUTF8 is the length of a character cut off at the end of b (b is
// valid UTF-8 as a whole, so whatever is cut continues after it).
func partialUTF8(b []byte) int {
	for i := 1; i <= 3 && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if r, size := utf8.DecodeRune(b[len(b)-i:]); r == utf8.RuneError && size <= 1 {
				return i
			}
			return 0
		}
	}
	return 0
}
