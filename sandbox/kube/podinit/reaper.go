package podinit

import (
	"os"
	"sync"
	"syscall"
)

// reaper reaps every child of PID 1 (orphans included) and hands the
// status of the helpers it started to their waiters: a wait4 of its own
// per helper would race the reaping of orphans.
type reaper struct {
	mu      sync.Mutex
	waiters map[int]chan syscall.WaitStatus
}

// start starts a process whose status comes on the returned channel.
func (r *reaper) start(exe string, argv []string, attr *os.ProcAttr) (*os.Process, <-chan syscall.WaitStatus, error) {
	r.mu.Lock() // no reap between the start and the registration
	defer r.mu.Unlock()
	p, err := os.StartProcess(exe, argv, attr)
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan syscall.WaitStatus, 1)
	r.waiters[p.Pid] = ch
	return p, ch, nil
}

// reap collects every child that has exited.
func (r *reaper) reap() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
		if ch := r.waiters[pid]; ch != nil {
			ch <- ws
			delete(r.waiters, pid)
		}
	}
}
