package podinit

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Port is the TCP port "serve" listens on in every sandbox Pod; the
// driver dials the Pod's IP there.
const Port = 7999

// TokenEnv is the variable that gives "serve" the sandbox's token: the
// Pod fills it from the sandbox's Secret (secretKeyRef), so the value is
// in no Pod spec and no argv, and no command is given it.
const TokenEnv = "BULLPEN_INIT_TOKEN"

// The protocol: one request per TCP connection. Every message is a
// frame: a type byte, a big-endian uint32 length, the payload. The
// client sends frameRequest first (JSON: magic, token, argv), then
// frameStdin data and one frameStdinClose once the server has accepted
// the request. The server answers frameAccepted (empty) or, for a
// request it refuses without running anything, frameRefused (a message)
// and closes; after frameAccepted come frameStdout and frameStderr data
// and, last, frameExit (a big-endian int32).
const (
	frameRequest    = 'q'
	frameAccepted   = 'a'
	frameStdin      = '0'
	frameStdinClose = 'c'
	frameStdout     = '1'
	frameStderr     = '2'
	frameExit       = 'x'
	frameRefused    = 'r'
)

// Bounds of the protocol.
const (
	maxRequest = 1 << 20  // the request frame: token and argv
	maxData    = 32 << 10 // one data frame's payload
	magic      = "bullpen-init/1"
)

// ErrRefused is what the client returns when the server refused the
// request before running anything (a bad token, a bad request): the
// request can be retried elsewhere without anything happening twice.
var ErrRefused = errors.New("podinit: request refused")

// request is the first frame's payload.
type request struct {
	Magic string   `json:"magic"`
	Token string   `json:"token"`
	Argv  []string `json:"argv"`
}

// EncodeRequest returns the first frame of a request to run argv (a
// subcommand and its arguments, as on the helper's command line) with
// token.
func EncodeRequest(token string, argv []string) []byte {
	b, err := json.Marshal(request{Magic: magic, Token: token, Argv: argv})
	if err != nil {
		panic(err) // strings only
	}
	return appendFrame(nil, frameRequest, b)
}

func appendFrame(dst []byte, typ byte, payload []byte) []byte {
	dst = append(dst, typ, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(dst[len(dst)-4:], uint32(len(payload)))
	return append(dst, payload...)
}

// writeFrame writes one frame in a single Write.
func writeFrame(w io.Writer, typ byte, payload []byte) error {
	_, err := w.Write(appendFrame(make([]byte, 0, 5+len(payload)), typ, payload))
	return err
}

// readFrame reads one frame whose payload is at most limit bytes into
// buf (grown as needed) and returns its type and payload.
func readFrame(r io.Reader, buf []byte, limit int) (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := int(binary.BigEndian.Uint32(h[1:]))
	if n > limit {
		return 0, nil, fmt.Errorf("podinit: a %q frame of %d bytes (at most %d)", h[0], n, limit)
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return 0, nil, fmt.Errorf("podinit: a cut frame: %w", io.ErrUnexpectedEOF)
	}
	return h[0], buf, nil
}

// frameWriter turns writes into data frames of one type, at most
// maxData each.
type frameWriter struct {
	w   io.Writer
	typ byte
}

func (f frameWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		c := p[:min(len(p), maxData)]
		if err := writeFrame(f.w, f.typ, c); err != nil {
			return n, err
		}
		n += len(c)
		p = p[len(c):]
	}
	return n, nil
}
