package sandbox

import (
	"io"
	"net"
	"sync"
)

// relayBufSize is the copy buffer of each direction of a relayed
// connection.
const relayBufSize = 32 << 10

var relayBufs = sync.Pool{New: func() any { b := make([]byte, relayBufSize); return &b }}

// relay copies both ways between a and b until both directions end,
// passing on each side's end of writing. It copies through a buffer, not
// the kernel's splice: net's splice borrows a pipe (two descriptors) from
// a pool that closes it only when the garbage collector gets to it, so a
// flood of short connections would leave pipes open long after them.
func relay(a, b net.Conn) {
	done := make(chan struct{}, 2)
	go func() { copyPlain(b, a); closeWriteAny(b); done <- struct{}{} }()
	go func() { copyPlain(a, b); closeWriteAny(a); done <- struct{}{} }()
	<-done
	<-done
}

// copyPlain copies src to dst hiding their ReadFrom and WriteTo, which
// would splice.
func copyPlain(dst io.Writer, src io.Reader) {
	buf := relayBufs.Get().(*[]byte)
	defer relayBufs.Put(buf)
	_, _ = io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, *buf)
}

func closeWriteAny(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}
