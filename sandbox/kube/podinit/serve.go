package podinit

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Bounds of "serve".
const (
	maxPending    = 16               // connections that have not sent their request yet
	maxActive     = 256              // requests running at once
	requestWait   = 10 * time.Second // for the request frame
	killGrace     = 5 * time.Second  // SIGTERM, then SIGKILL to the helper's group
	outputDrain   = 2 * time.Second  // output still open after the helper exited
	defaultListen = ":7999"
)

// served are the subcommands a request may run.
var served = map[string]bool{"exec": true, "kill": true, "resize": true, "file": true, "stats": true}

// server is "serve": PID 1 of the sandbox container.
type server struct {
	tokenSum [32]byte // SHA-256 of the token: compared in constant time, whatever its length
	exe      string
	env      []string // the helpers': the container's without the token
	reaper   *reaper
	log      io.Writer
	pending  chan struct{}
	active   chan struct{}
	bridges  map[int]*bridge // by port
}

// serveMain is "serve [ADDR]": it reaps orphans as "sleep" does, and
// serves the exec and files protocol on ADDR (default :7999) when the
// token variable is set. It exits on SIGTERM or SIGINT.
func serveMain(args []string, stderr io.Writer) int {
	addr := defaultListen
	if len(args) > 1 {
		addr = args[1]
	}
	// Not dumpable: the sandbox's commands share PID 1's uid, but cannot
	// read its memory or its environment (the token) through /proc.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	// Orphans come here (PID 1 gets them anyway; under a test, not).
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	r := &reaper{waiters: map[int]chan syscall.WaitStatus{}}
	if token := os.Getenv(TokenEnv); token == "" {
		fmt.Fprintf(stderr, "bullpen-kube-init: %s is not set: not serving\n", TokenEnv)
	} else if ln, err := net.Listen("tcp", addr); err != nil {
		fmt.Fprintf(stderr, "bullpen-kube-init: %v: not serving\n", err)
	} else {
		s := &server{tokenSum: sha256.Sum256([]byte(token)), env: withoutToken(os.Environ()), reaper: r, log: stderr,
			pending: make(chan struct{}, maxPending), active: make(chan struct{}, maxActive)}
		s.bridges = listenBridges(os.Getenv(BridgeEnv), stderr) // before any command runs
		if s.exe, err = os.Executable(); err != nil {
			s.exe = "/proc/self/exe"
		}
		fmt.Fprintf(stderr, "bullpen-kube-init: serving on %s\n", ln.Addr())
		go s.accept(ln)
	}
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			return 0
		}
		r.reap()
	}
	return 0
}

// withoutToken returns env without the token variable.
func withoutToken(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, TokenEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func (s *server) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			time.Sleep(50 * time.Millisecond) // out of descriptors: let some close
			continue
		}
		select {
		case s.pending <- struct{}{}:
			go s.handle(c)
		default:
			c.Close() // too many connections that said nothing yet
		}
	}
}

// handle reads one request, checks its token and runs it.
func (s *server) handle(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(requestWait))
	typ, b, err := readFrame(c, nil, maxRequest)
	<-s.pending
	var req request
	switch {
	case err != nil || typ != frameRequest || json.Unmarshal(b, &req) != nil || req.Magic != magic:
		s.refuse(c, "not a bullpen-init request")
		return
	case subtle.ConstantTimeCompare(sumOf(req.Token), s.tokenSum[:]) != 1:
		s.refuse(c, "unauthorized")
		return
	case len(req.Argv) > 0 && req.Argv[0] == "bridge":
		_ = c.SetDeadline(time.Time{})
		s.serveBridge(c, req.Argv)
		return
	case len(req.Argv) == 0 || !served[req.Argv[0]]:
		s.refuse(c, "not a command this init serves")
		return
	}
	select {
	case s.active <- struct{}{}:
		defer func() { <-s.active }()
	default:
		s.refuse(c, "busy")
		return
	}
	_ = c.SetDeadline(time.Time{})
	if writeFrame(c, frameAccepted, nil) == nil {
		s.run(c, req.Argv)
	}
}

func sumOf(s string) []byte { b := sha256.Sum256([]byte(s)); return b[:] }

func (s *server) refuse(c net.Conn, why string) {
	fmt.Fprintf(s.log, "bullpen-kube-init: refused a request from %s: %s\n", c.RemoteAddr(), why)
	_ = writeFrame(c, frameRefused, []byte(why))
}

// run runs the helper with argv in its own process group and relays its
// stdin, stdout, stderr and exit status over c. A connection that drops
// before the helper exits gets it killed: SIGTERM (an "exec" helper then
// kills its command's group, a "file write" removes its temporary file),
// then SIGKILL to its group.
func (s *server) run(c net.Conn, argv []string) {
	var pipes [6]*os.File // stdin r/w, stdout r/w, stderr r/w
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			s.fail(c, err)
			return
		}
		pipes[i], pipes[i+1] = r, w
		defer r.Close()
		defer w.Close()
	}
	stdinW, outR, errR := pipes[1], pipes[2], pipes[4]
	p, done, err := s.reaper.start(s.exe, append([]string{"bullpen-kube-init"}, argv...), &os.ProcAttr{Env: s.env,
		Files: []*os.File{pipes[0], pipes[3], pipes[5]}, Sys: &syscall.SysProcAttr{Setpgid: true}})
	if err != nil {
		s.fail(c, err)
		return
	}
	defer p.Release()
	pipes[0].Close()
	pipes[3].Close()
	pipes[5].Close()
	var (
		wmu      sync.Mutex
		finished atomic.Bool
		dropOnce sync.Once
		exited   = make(chan struct{})
	)
	drop := func() {
		dropOnce.Do(func() {
			_ = p.Signal(syscall.SIGTERM)
			go func() {
				select {
				case <-exited:
				case <-time.After(killGrace):
					_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
				}
			}()
		})
	}
	var outs sync.WaitGroup
	relay := func(r *os.File, typ byte) {
		defer outs.Done()
		w := frameWriter{lockedWriter{&wmu, c}, typ}
		if _, err := io.Copy(w, r); err != nil && !errors.Is(err, os.ErrClosed) {
			drop()
			_, _ = io.Copy(io.Discard, r) // the helper must not block on a full pipe
		}
	}
	outs.Add(2)
	go relay(outR, frameStdout)
	go relay(errR, frameStderr)
	go func() {
		_ = readStdin(c, stdinW) // until the connection ends
		if !finished.Load() {
			drop()
		}
	}()
	ws := <-done
	close(exited)
	drained := make(chan struct{})
	go func() { outs.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(outputDrain): // a background process holds the output
		outR.Close()
		errR.Close()
		<-drained
	}
	finished.Store(true)
	code := ws.ExitStatus()
	if ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(int32(code)))
	wmu.Lock()
	_ = writeFrame(c, frameExit, b[:])
	wmu.Unlock()
}

// readStdin writes the client's stdin frames into w and closes it at
// the client's close; it returns when the connection ends or breaks the
// protocol, with the reason.
func readStdin(c net.Conn, w *os.File) error {
	buf := make([]byte, maxData)
	broken := false // the helper closed its stdin: the rest is dropped
	for {
		typ, p, err := readFrame(c, buf, maxData)
		if err != nil {
			return err
		}
		switch typ {
		case frameStdin:
			if !broken {
				if _, err := w.Write(p); err != nil {
					broken = true
				}
			}
		case frameStdinClose:
			w.Close()
			broken = true
		default:
			return fmt.Errorf("podinit: an unexpected frame %q", typ)
		}
	}
}

func (s *server) fail(c net.Conn, err error) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], 126)
	_ = writeFrame(c, frameStderr, []byte(err.Error()+"\n"))
	_ = writeFrame(c, frameExit, b[:])
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
