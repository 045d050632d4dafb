package fds

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// exhaust opens /dev/null until the process has no descriptor left, and
// returns a func that frees them all.
func exhaust(t *testing.T) func() {
	t.Helper()
	var held []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				t.Fatalf("filling the descriptor table: %v", err)
			}
			break
		}
		held = append(held, f)
	}
	return func() {
		for _, f := range held {
			f.Close()
		}
	}
}

// lowerLimit sets the soft descriptor limit to what is open now plus
// room, for the test's life.
func lowerLimit(t *testing.T, room int) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	u, err := Count()
	if err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = uint64(u.Open + room)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}

// TestListenerRidesOutEMFILE: with every descriptor taken, a plain
// listener's Accept fails with EMFILE (a server built on it, such as
// fasthttp's, stops for good); the wrapped one waits, and accepts the
// queued connections once descriptors are freed.
func TestListenerRidesOutEMFILE(t *testing.T) {
	lowerLimit(t, 64)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for range 2 { // queued in the backlog before the table fills
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	free := exhaust(t)
	if c, err := ln.Accept(); !errors.Is(err, syscall.EMFILE) {
		if c != nil {
			c.Close()
		}
		free()
		t.Fatalf("plain Accept with no descriptor free = %v, want EMFILE", err)
	}

	wrapped := Listener(ln, slog.New(slog.NewTextHandler(io.Discard, nil)))
	got := make(chan net.Conn, 2)
	errs := make(chan error, 1)
	go func() {
		for range 2 {
			c, err := wrapped.Accept()
			if err != nil {
				errs <- err
				return
			}
			got <- c
		}
	}()
	select {
	case c := <-got:
		free()
		t.Fatalf("accepted %v with no descriptor free", c.RemoteAddr())
	case err := <-errs:
		free()
		t.Fatalf("wrapped Accept gave up: %v", err)
	case <-time.After(200 * time.Millisecond): // still retrying
	}
	free()
	for i := range 2 {
		select {
		case c := <-got:
			c.Close()
		case err := <-errs:
			t.Fatalf("Accept %d after descriptors were freed: %v", i, err)
		case <-time.After(5 * time.Second):
			t.Fatalf("Accept %d: nothing accepted 5 s after descriptors were freed", i)
		}
	}
}

// TestListenerCloseEndsRetry: Close ends an Accept that waits out EMFILE.
func TestListenerCloseEndsRetry(t *testing.T) {
	lowerLimit(t, 64)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	free := exhaust(t)
	defer free()
	wrapped := Listener(ln, nil)
	errs := make(chan error, 1)
	go func() { _, err := wrapped.Accept(); errs <- err }()
	time.Sleep(50 * time.Millisecond)
	wrapped.Close()
	select {
	case err := <-errs:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close = %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept kept waiting after Close")
	}
}

func TestCountAndRaise(t *testing.T) {
	before, err := Count()
	if err != nil || before.Open < 3 || before.Limit < before.Open {
		t.Fatalf("Count = %+v, %v", before, err)
	}
	f, _ := os.Open(os.DevNull)
	after, _ := Count()
	f.Close()
	if after.Open != before.Open+1 {
		t.Errorf("Count after one more open file = %d, want %d", after.Open, before.Open+1)
	}
	lowerLimit(t, 100)
	soft, err := RaiseLimit()
	var lim syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	if err != nil || soft != lim.Max || lim.Cur != lim.Max {
		t.Errorf("RaiseLimit = %d, %v; limit now %d of %d", soft, err, lim.Cur, lim.Max)
	}
}
