package podinit

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
)

// Call runs argv (a subcommand and its arguments: "exec …", "kill …",
// "file …", "stats") through the "serve" of the Pod at the other end of
// conn, authenticated with token, relaying stdin (nil for none),
// stdout and stderr; it returns the helper's exit status. It closes
// conn. Cancelling ctx, a stdin that fails or an output that cannot be
// written closes the connection, and the server then kills what it ran.
// A request the server refused returns an error wrapping ErrRefused
// before anything ran and before anything was read from stdin.
func Call(ctx context.Context, conn net.Conn, token string, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if _, err := conn.Write(EncodeRequest(token, argv)); err != nil {
		return 0, fmt.Errorf("podinit: send the request: %w", err)
	}
	buf := make([]byte, maxData)
	switch typ, p, err := readFrame(conn, buf, maxData); {
	case err != nil:
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return 0, fmt.Errorf("podinit: no answer to the request: %w", err)
	case typ == frameRefused:
		return 0, fmt.Errorf("%w: %s", ErrRefused, p)
	case typ != frameAccepted:
		return 0, fmt.Errorf("podinit: an unexpected answer %q", typ)
	}
	go sendStdin(conn, stdin)
	for {
		typ, p, err := readFrame(conn, buf, maxData)
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return 0, fmt.Errorf("podinit: the stream ended: %w", err)
		}
		switch typ {
		case frameStdout, frameStderr:
			w := stdout
			if typ == frameStderr {
				w = stderr
			}
			if _, err := w.Write(p); err != nil {
				return 0, fmt.Errorf("podinit: write the output: %w", err)
			}
		case frameExit:
			if len(p) != 4 {
				return 0, fmt.Errorf("podinit: a bad exit frame")
			}
			return int(int32(binary.BigEndian.Uint32(p))), nil
		default:
			return 0, fmt.Errorf("podinit: an unknown frame %q", typ)
		}
	}
}

// sendStdin copies stdin into frames and then closes the command's
// stdin; a stdin that fails closes the connection instead, so that the
// command never takes a cut input for a whole one.
func sendStdin(conn net.Conn, stdin io.Reader) {
	if stdin != nil {
		buf := make([]byte, maxData)
		if _, err := io.CopyBuffer(frameWriter{conn, frameStdin}, onlyReader{stdin}, buf); err != nil {
			conn.Close()
			return
		}
	}
	_ = writeFrame(conn, frameStdinClose, nil)
}

// onlyReader hides a reader's WriteTo, so that CopyBuffer uses the
// buffer (and frames of maxData).
type onlyReader struct{ io.Reader }
