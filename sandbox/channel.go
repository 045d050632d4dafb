package sandbox

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The host's end of init's control channel. The host binds the socket
// (in RunDir, mode 0600, which no sandbox can see) and init listens on it,
// so the kernel reports init as the peer of every connection the host
// makes: dialInit checks that pid, so nothing but the sandbox's init can
// answer the host, even if something else got hold of the socket path.
// Peer credentials cannot tell who accepted a connection, though: a
// process holding a copy of init's listener would look like init. So init
// first sends the key it got at start, and the host sends nothing to a
// peer that does not know it.
// Init in turn accepts only peers from outside its pid and user
// namespaces (package sbinit, checkPeer).

// bindControl creates the unix socket at sock, bound but not listening,
// for init to listen on.
func bindControl(sock string) (*os.File, error) {
	os.Remove(sock)
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	// Nobody can connect before init listens, and then only root.
	if err := os.Chmod(sock, 0o600); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	return os.NewFile(uintptr(fd), sock), nil
}

// dialInit connects to the control socket and checks that the process
// listening on it is the sandbox's init (host pid) and that the one that
// accepted the connection knows the init's key.
func dialInit(ctx context.Context, sock string, pid int, key string) (*net.UnixConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, err
	}
	uc := c.(*net.UnixConn)
	if err := checkInitPeer(uc, pid); err != nil {
		uc.Close()
		return nil, err
	}
	if err := checkHello(uc, key); err != nil {
		uc.Close()
		return nil, err
	}
	return uc, nil
}

// helloTimeout bounds the wait for init's hello: init sends it as soon as
// it accepts.
const helloTimeout = 10 * time.Second

func checkHello(c *net.UnixConn, key string) error {
	_ = c.SetReadDeadline(time.Now().Add(helloTimeout))
	var r initReply
	_, err := readFrame(c, &r)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		return fmt.Errorf("sandbox: control socket hello: %w", err)
	}
	if key == "" || subtle.ConstantTimeCompare([]byte(r.Hello), []byte(key)) != 1 {
		return errors.New("sandbox: control socket: the peer does not know the init's key")
	}
	return nil
}

// initKeyFile holds the key of the sandbox's running init (in its state
// directory, mode 0600), for a restarted Manager to adopt it.
const initKeyFile = "init.key"

// newInitKey makes a fresh key for an init about to start and stores it.
func newInitKey(s *sandbox) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("sandbox: init key: %w", err)
	}
	key := hex.EncodeToString(b[:])
	if err := os.WriteFile(filepath.Join(s.dir, initKeyFile), []byte(key), 0o600); err != nil {
		return "", fmt.Errorf("sandbox: init key: %w", err)
	}
	return key, nil
}

// readInitKey returns the stored key of the sandbox's init, "" if none.
func readInitKey(s *sandbox) string {
	b, _ := os.ReadFile(filepath.Join(s.dir, initKeyFile))
	return strings.TrimSpace(string(b))
}

func checkInitPeer(c *net.UnixConn, pid int) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return fmt.Errorf("sandbox: control socket: %w", err)
	}
	var cred *unix.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return fmt.Errorf("sandbox: control socket: %w", err)
	}
	if cerr != nil {
		return fmt.Errorf("sandbox: control socket peer: %w", cerr)
	}
	if int(cred.Pid) != pid || pid <= 0 {
		return fmt.Errorf("sandbox: control socket is served by pid %d, not by the sandbox's init (pid %d)", cred.Pid, pid)
	}
	return nil
}

// errInitExited: init closed its status pipe (it exited) during setup.
var errInitExited = errors.New("init exited during setup")

// initStatus reads the lines init writes on its status pipe during setup:
// "tid <n>", then "ok"; "error: <msg>" at any point.
type initStatus struct {
	lines   chan string
	done    chan struct{}
	ctx     context.Context
	timer   *time.Timer
	logPath string
}

func newInitStatus(ctx context.Context, r io.Reader, logPath string) *initStatus {
	st := &initStatus{lines: make(chan string), done: make(chan struct{}), ctx: ctx,
		timer: time.NewTimer(initReadyTimeout), logPath: logPath}
	go func() {
		defer close(st.lines)
		br := bufio.NewReader(io.LimitReader(r, 8192))
		for {
			line, err := br.ReadString('\n')
			if line = strings.TrimSpace(line); line != "" {
				select {
				case st.lines <- line:
				case <-st.done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return st
}

func (st *initStatus) close() {
	st.timer.Stop()
	close(st.done)
}

// spawnerTid waits for "tid <n>": the spawner thread's id in init's pid
// namespace.
func (st *initStatus) spawnerTid() (int, error) {
	v, err := st.next("tid ")
	if err != nil {
		return 0, err
	}
	tid, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("sandbox: init: bad status %q", v)
	}
	return tid, nil
}

// ready waits for "ok".
func (st *initStatus) ready() error {
	_, err := st.next("ok")
	return err
}

// next waits for the next line, which must start with prefix; it returns
// the rest of the line.
func (st *initStatus) next(prefix string) (string, error) {
	select {
	case line, ok := <-st.lines:
		if v, found := strings.CutPrefix(line, prefix); ok && found {
			return strings.TrimSpace(v), nil
		}
		msg := strings.TrimSpace(strings.TrimPrefix(line, "error: "))
		if msg == "" {
			return "", fmt.Errorf("sandbox: init: %w%s", errInitExited, st.logTail())
		}
		return "", fmt.Errorf("sandbox: init: %s", msg)
	case <-st.timer.C:
		return "", errors.New("sandbox: init did not become ready")
	case <-st.ctx.Done():
		return "", st.ctx.Err()
	}
}

func (st *initStatus) logTail() string {
	b, err := os.ReadFile(st.logPath)
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return ": " + strings.TrimSpace(string(b))
}
