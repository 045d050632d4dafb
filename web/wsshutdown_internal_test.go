package web

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Websockets that open while the server shuts down do not race its wait
// (sync.WaitGroup forbids an Add from zero concurrent with Wait: the race
// detector, or the WaitGroup itself, catches it), and the open count
// still comes back to zero.
func TestWebsocketsOpeningDuringShutdown(t *testing.T) {
	for range 50 {
		s := &Server{}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
						s.trackWebsocket()()
					}
				}
			}()
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		s.waitWebsockets(ctx)
		cancel()
		close(stop)
		wg.Wait()
		if n := s.WebsocketClients(); n != 0 {
			t.Fatalf("%d websockets counted open after all ended", n)
		}
	}
}
