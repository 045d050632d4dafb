package web

import (
	"sync"
	"time"
)

// flightWait bounds how long an attempt waits for another attempt with
// the same credential to settle before it goes ahead on its own.
const flightWait = 10 * time.Second

// authFlights lets the concurrent first attempts with one credential
// share a single attempt against the limiter. Without it, a client that
// sends a burst with a token the server has not seen work yet (a fresh
// token, or one whose known entry expired) would spend one of its
// address's attempts per request before any lookup answered, and get 429
// "too many failed attempts" where none failed. The first attempt leads:
// it takes an attempt and looks the credential up; the others wait for it
// and then go on as known (it worked) or lead in turn (it did not, so
// each bad guess still costs an attempt of its own).
type authFlights struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

// join returns lead true and a finish to call once the attempt settled
// (after a success was noted as known), or lead false and a channel that
// closes when the leading attempt with secret settles.
func (f *authFlights) join(secret string) (lead bool, settled <-chan struct{}, finish func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ch, ok := f.m[secret]; ok {
		return false, ch, nil
	}
	if f.m == nil {
		f.m = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	f.m[secret] = ch
	return true, ch, func() {
		f.mu.Lock()
		delete(f.m, secret)
		f.mu.Unlock()
		close(ch)
	}
}
