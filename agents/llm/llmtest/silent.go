package llmtest

import (
	"io"
	"net"
	"sync"
)

// Silent is a server that accepts connections, reads what it is sent and
// never answers: a hung provider.
type Silent struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// NewSilent starts a Silent server on 127.0.0.1.
func NewSilent() *Silent {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("llmtest: listen: " + err.Error())
	}
	s := &Silent{ln: ln}
	s.wg.Add(1)
	go s.accept()
	return s
}

func (s *Silent) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		go io.Copy(io.Discard, c) //nolint:errcheck // read and drop, never answer
	}
}

// BaseURL is an OpenAI- or Anthropic-style base URL on the server.
func (s *Silent) BaseURL() string { return "http://" + s.ln.Addr().String() + "/v1" }

// Accepted returns how many connections it has taken.
func (s *Silent) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Close stops the server and drops its connections.
func (s *Silent) Close() {
	s.ln.Close()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
}
