// Package fds keeps a process serving when it runs short of file
// descriptors: listeners that wait and retry when accept finds none free
// (instead of treating "too many open files" as the end of the
// listener), the soft descriptor limit raised to the hard one at start,
// and a count of open descriptors against the limit for health reports.
package fds

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"
)

// Backoff bounds between accept retries: the first wait, doubled after
// each failure in a row up to the most.
const (
	firstBackoff = 5 * time.Millisecond
	maxBackoff   = time.Second
)

// Listener returns ln whose Accept rides out transient failures: no free
// descriptor in the process (EMFILE) or the system (ENFILE), no buffer
// memory, and connections aborted before they were accepted. It waits
// with backoff and tries again, logging once per run of failures, so
// that a server whose descriptors ran out accepts again as soon as some
// are freed. Any other error (the listener closed) is returned as is.
func Listener(ln net.Listener, log *slog.Logger) net.Listener {
	if log == nil {
		log = slog.Default()
	}
	return &retryListener{Listener: ln, log: log, closed: make(chan struct{})}
}

type retryListener struct {
	net.Listener
	log    *slog.Logger
	once   sync.Once
	closed chan struct{}
}

// Accept waits out transient failures (see Listener).
func (l *retryListener) Accept() (net.Conn, error) {
	wait := time.Duration(0)
	for {
		c, err := l.Listener.Accept()
		if err == nil || !Transient(err) {
			if wait > 0 && err == nil {
				l.log.Info("accepting connections again", "addr", l.Addr().String())
			}
			return c, err
		}
		if wait == 0 {
			l.log.Warn("accept failed; retrying with backoff", "addr", l.Addr().String(), "err", err)
			wait = firstBackoff
		} else {
			wait = min(2*wait, maxBackoff)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-l.closed:
			t.Stop()
			return nil, net.ErrClosed
		}
	}
}

// Close closes the listener and ends a wait in Accept.
func (l *retryListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// Transient reports whether an accept error passes once resources are
// freed: out of descriptors (EMFILE, ENFILE), out of buffer memory
// (ENOBUFS, ENOMEM), or a connection aborted in the queue.
func Transient(err error) bool {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}
