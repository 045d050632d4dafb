package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
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
// stdout_bytes tell what was dropped); a large answer is written out as
// it is encoded, never held whole.
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
	if len(rr.Stdout)+len(rr.Stderr) <= runInlineMax {
		// The usual small answer goes out whole, with a Content-Length:
		// one write, read by the client in one go, where a streamed body
		// is chunks and a terminating chunk.
		var buf bytes.Buffer
		buf.Grow(256 + len(rr.Stdout) + len(rr.Stderr))
		writeRunResult(&buf, rr)
		return c.Send(buf.Bytes())
	}
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		writeRunResult(w, rr)
		_ = w.Flush()
	})
	return nil
}

// runInlineMax is the most output an answer to …/run holds in memory
// whole; larger answers are streamed as they are encoded.
const runInlineMax = 64 << 10

// jsonWriter is what the answer is written to: a bufio.Writer (streamed)
// or a bytes.Buffer (whole).
type jsonWriter interface {
	io.Writer
	io.ByteWriter
	io.StringWriter
}

// writeRunResult writes rr as one JSON object, the output in pieces. The
// head is written by hand (no reflection on this hot path), its keys in
// the order encoding/json gives a map.
func writeRunResult(w jsonWriter, rr bullpen.SandboxRunResult) {
	b := make([]byte, 0, 256)
	b = strconv.AppendInt(append(b, `{"duration_ms":`...), rr.Duration.Milliseconds(), 10)
	b = strconv.AppendInt(append(b, `,"exit_code":`...), int64(rr.ExitCode), 10)
	if rr.Signal != "" {
		q, _ := json.Marshal(rr.Signal)
		b = append(append(b, `,"signal":`...), q...)
	}
	b = strconv.AppendInt(append(b, `,"stderr_bytes":`...), rr.StderrBytes, 10)
	b = strconv.AppendBool(append(b, `,"stderr_truncated":`...), rr.StderrTruncated)
	b = strconv.AppendInt(append(b, `,"stdout_bytes":`...), rr.StdoutBytes, 10)
	b = strconv.AppendBool(append(b, `,"stdout_truncated":`...), rr.StdoutTruncated)
	b = strconv.AppendBool(append(b, `,"timed_out":`...), rr.TimedOut)
	b = strconv.AppendBool(append(b, `,"truncated":`...), rr.Truncated)
	w.Write(b) // the object stays open for the output
	writeOutput(w, "stdout", rr.Stdout)
	writeOutput(w, "stderr", rr.Stderr)
	w.WriteByte('}')
}

// writeOutput writes `,"name":"…"` (or name_b64 when b is not UTF-8),
// escaping 32 KiB at a time.
func writeOutput(w jsonWriter, name string, b []byte) {
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
