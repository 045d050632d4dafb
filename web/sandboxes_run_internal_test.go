package web

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bullpen-hq/bullpen"
)

// The hand-written answer of …/run is exactly what encoding/json makes of
// the same fields, for text and binary output and every flag.
func TestWriteRunResultMatchesEncodingJSON(t *testing.T) {
	cases := []bullpen.SandboxRunResult{
		{Stdout: []byte("hi\n")},
		{Stdout: []byte("<a href=\"x\">&\u2028é\x01\t</a>"), Stderr: []byte{0xff, 0xfe}, StdoutBytes: 9, StderrBytes: 2,
			StdoutTruncated: true, Truncated: true, SandboxResult: bullpen.SandboxResult{TimedOut: true}},
		{SandboxResult: bullpen.SandboxResult{ExitCode: 137, Signal: "SIGKILL\"<>", Duration: 1500 * time.Millisecond},
			Stderr: []byte(strings.Repeat("é", 40<<10)), StderrTruncated: true},
	}
	for i, rr := range cases {
		var got bytes.Buffer
		writeRunResult(&got, rr)
		want := map[string]any{"exit_code": rr.ExitCode, "timed_out": rr.TimedOut, "truncated": rr.Truncated,
			"stdout_truncated": rr.StdoutTruncated, "stderr_truncated": rr.StderrTruncated,
			"stdout_bytes": rr.StdoutBytes, "stderr_bytes": rr.StderrBytes, "duration_ms": rr.Duration.Milliseconds()}
		if rr.Signal != "" {
			want["signal"] = rr.Signal
		}
		for name, b := range map[string][]byte{"stdout": rr.Stdout, "stderr": rr.Stderr} {
			if utf8.Valid(b) {
				want[name] = string(b)
			} else {
				want[name+"_b64"] = b
			}
		}
		var g, w any
		if err := json.Unmarshal(got.Bytes(), &g); err != nil {
			t.Fatalf("case %d: not JSON: %v\n%s", i, err, got.Bytes())
		}
		wb, _ := json.Marshal(want)
		_ = json.Unmarshal(wb, &w)
		gb, _ := json.Marshal(g)
		if !bytes.Equal(gb, wb) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, gb, wb)
		}
		// The head itself is byte for byte encoding/json's.
		head, _ := json.Marshal(map[string]any{"duration_ms": want["duration_ms"], "exit_code": want["exit_code"]})
		if !bytes.HasPrefix(got.Bytes(), head[:len(head)-1]) {
			t.Fatalf("case %d: head %s, want prefix %s", i, got.Bytes(), head)
		}
	}
}
