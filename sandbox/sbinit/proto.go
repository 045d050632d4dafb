package sbinit

import (
	"errors"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// The host talks to init over a unix stream socket, one exec at a time
// per connection: after the exit reply the host may send a "release"
// frame and keep the connection for its next exec (a connection that
// carried a kill or an error is closed). Frames are a 4-byte big-endian
// length and a JSON body; the request frame carries the exec's stdio pipe
// ends as SCM_RIGHTS.

// MaxFrame is the largest frame either side accepts.
const MaxFrame = 4 << 20

// Request is sent by the host to init.
type Request struct {
	Op      string   `json:"op"` // "exec", "ping", "kill", OpRelease
	Cmd     []string `json:"cmd,omitempty"`
	Env     []string `json:"env,omitempty"`
	Dir     string   `json:"dir,omitempty"`
	Timeout int64    `json:"timeout,omitempty"` // nanoseconds
	Stdin   bool     `json:"stdin,omitempty"`   // first passed fd is stdin
}

// Exit is how a command ended.
type Exit struct {
	Code     int    `json:"code"`
	Signal   string `json:"signal,omitempty"`
	TimedOut bool   `json:"timed_out,omitempty"`
}

// Reply is sent by init to the host.
type Reply struct {
	// Hello is the first frame on every connection: Config.Key.
	Hello string `json:"hello,omitempty"`
	Pid   int    `json:"pid,omitempty"`
	Exit  *Exit  `json:"exit,omitempty"`
	Error string `json:"error,omitempty"`
	// NotFound is set when the command could not be found or executed.
	NotFound bool `json:"not_found,omitempty"`
}

// writeFrame writes r as one frame on c (init never passes fds).
func writeFrame(c *os.File, r Reply) error {
	buf := r.appendJSON(make([]byte, 4, 64))
	n := len(buf) - 4
	buf[0], buf[1], buf[2], buf[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	_, err := c.Write(buf)
	return err
}

// readFrame reads one frame into v and returns the fds passed with it
// (close-on-exec, so that no other command inherits them).
func readFrame(c *os.File, v *Request) ([]int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var hdr [4]byte
	var oob [64]byte // room for 8 fds
	var n, oobn int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), hdr[:], oob[:], unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN && rerr != unix.EINTR
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return nil, err
	}
	fds, err := ParseRights(oob[:oobn])
	if err != nil {
		return nil, err
	}
	fail := func(err error) ([]int, error) {
		closeFds(fds)
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
	size := uint32(hdr[0])<<24 | uint32(hdr[1])<<16 | uint32(hdr[2])<<8 | uint32(hdr[3])
	if size > MaxFrame {
		return fail(errors.New("frame of " + strconv.FormatUint(uint64(size), 10) + " bytes too large"))
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(c, body); err != nil {
		return fail(err)
	}
	if err := decodeRequest(body, v); err != nil {
		return fail(err)
	}
	return fds, nil
}

// ParseRights returns the fds passed in the SCM_RIGHTS messages of a
// received control buffer (host and init both receive fds this way).
func ParseRights(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for i := range msgs {
		if f, err := unix.ParseUnixRights(&msgs[i]); err == nil {
			fds = append(fds, f...)
		}
	}
	return fds, nil
}

func closeFds(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
