package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/bullpen-hq/bullpen/sandbox/sbinit"
	"golang.org/x/sys/unix"
)

// The host talks to a sandbox's init over a unix stream socket: one
// connection per exec. Frames are a 4-byte big-endian length and a JSON
// body; the request frame carries the exec's stdio pipe ends as SCM_RIGHTS.
// This is the host's end; init's is in package sbinit.

const maxFrame = sbinit.MaxFrame

// initRequest is sent by the host to init.
type initRequest = sbinit.Request

// initReply is sent by init to the host (sbinit.Reply, with the public
// ExitResult, which has the same encoding as sbinit.Exit).
type initReply struct {
	Hello string      `json:"hello,omitempty"`
	Pid   int         `json:"pid,omitempty"`
	Exit  *ExitResult `json:"exit,omitempty"`
	Error string      `json:"error,omitempty"`
	// NotFound is set when the command could not be found or executed.
	NotFound bool `json:"not_found,omitempty"`
}

// writeFrame writes v as one frame, passing fds with it.
func writeFrame(c *net.UnixConn, v any, fds []int) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(body) > maxFrame {
		return errors.New("frame too large")
	}
	buf := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(buf, uint32(len(body)))
	copy(buf[4:], body)
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	n, oobn, err := c.WriteMsgUnix(buf, oob, nil)
	if err != nil {
		return err
	}
	if oobn != len(oob) {
		return errors.New("short control message write")
	}
	if n < len(buf) {
		_, err = c.Write(buf[n:])
	}
	return err
}

// readFrame reads one frame into v and returns any fds passed with it.
func readFrame(c *net.UnixConn, v any) ([]*os.File, error) {
	var hdr [4]byte
	oob := make([]byte, unix.CmsgSpace(8*4))
	n, oobn, _, _, err := c.ReadMsgUnix(hdr[:], oob)
	if err != nil {
		return nil, err
	}
	fds, err := sbinit.ParseRights(oob[:oobn])
	if err != nil {
		return nil, err
	}
	var files []*os.File
	for _, fd := range fds {
		files = append(files, os.NewFile(uintptr(fd), "passed"))
	}
	fail := func(err error) ([]*os.File, error) {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	if n == 0 {
		return fail(io.EOF)
	}
	if n < 4 {
		if _, err := io.ReadFull(c, hdr[n:]); err != nil {
			return fail(err)
		}
	}
	size := binary.BigEndian.Uint32(hdr[:])
	if size > maxFrame {
		return fail(fmt.Errorf("frame of %d bytes too large", size))
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(c, body); err != nil {
		return fail(err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fail(err)
	}
	return files, nil
}
