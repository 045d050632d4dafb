package cli

import (
	"net"
	"strconv"
	"sync"
	"time"
)

// Default bounds of one agent's socket: connections open at once, and new
// connections per second with a burst. An agent CLI keeps a few
// connections alive; a flood from its sandbox is refused past these.
const (
	DefaultMaxConns   = 32
	DefaultConnRate   = 50
	DefaultConnBurst  = 100
	refusedAnswerTime = 100 * time.Millisecond
)

// refusal answers a connection turned away, before it is closed.
var refusal = func() []byte {
	body := "unavailable: too many connections from this agent's sandbox\n"
	return []byte("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}()

// limitListener accepts connections up to max open at once and rate per
// second (burst at most); one past either is answered 503 and closed at
// once, so that it holds no descriptor.
type limitListener struct {
	net.Listener
	max   int
	rate  float64
	burst float64
	now   func() time.Time
	// refused is called once per connection turned away.
	refused func(why string)

	mu     sync.Mutex
	open   int
	tokens float64
	last   time.Time
}

func newLimitListener(ln net.Listener, max int, rate float64, burst int, refused func(string)) *limitListener {
	return &limitListener{Listener: ln, max: max, rate: rate, burst: float64(burst), tokens: float64(burst),
		now: time.Now, last: time.Now(), refused: refused}
}

// Accept returns the next connection within the limits.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if why := l.take(); why != "" {
			l.refuse(c, why)
			continue
		}
		return &limitedConn{Conn: c, l: l}, nil
	}
}

// take admits one connection, or says why not.
func (l *limitListener) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	l.last = now
	switch {
	case l.open >= l.max:
		return "open connections"
	case l.tokens < 1:
		return "connection rate"
	}
	l.tokens--
	l.open++
	return ""
}

func (l *limitListener) release() {
	l.mu.Lock()
	l.open--
	l.mu.Unlock()
}

// refuse answers c 503 without waiting on it, and closes it.
func (l *limitListener) refuse(c net.Conn, why string) {
	if l.refused != nil {
		l.refused(why)
	}
	_ = c.SetWriteDeadline(time.Now().Add(refusedAnswerTime))
	_, _ = c.Write(refusal)
	_ = c.Close()
}

// limitedConn gives its place back once, when closed.
type limitedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.l.release)
	return err
}
