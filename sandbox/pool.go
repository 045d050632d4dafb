package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
)

// DefaultInitPool is the pool size when Config.InitPool is nil.
const DefaultInitPool = 2

// initPool holds inits started ahead of time (see Config.InitPool). Each
// entry has its sandbox id, its cgroups (default limits) with init and its
// spawner thread moved in, its control socket and its key; its init has
// pivoted into a staging root (sbinit.Config.Stage) and waits for an
// assignment. A fresh Create takes one instead of starting an init.
type initPool struct {
	ready chan *poolEntry
	wake  chan struct{} // a take happened: refill
	dir   string        // StateDir/pool: the entries' logs
	// stage is runDir + ".pool", in each init's own mount namespace its
	// staging mount point (so: traversable).
	stage string
	taken atomic.Int64          // Creates served from the pool
	err   atomic.Pointer[error] // the last error of starting one
	// lastCreate is when the last Create finished (unix nanoseconds).
	lastCreate atomic.Int64
}

// poolEntry is one pre-started init.
type poolEntry struct {
	id      string
	cpu     float64 // the limits its cgroups have
	mem     int64
	pids    int64
	p       *initProc
	f       *initFiles
	st      *initStatus
	logPath string
}

// poolSize validates Config.InitPool.
func poolSize(cfg *Config) (int, error) {
	if cfg.InitPool == nil {
		return DefaultInitPool, nil
	}
	if *cfg.InitPool < 0 {
		return 0, bullpen.Errorf(bullpen.EINVALID, "Config.InitPool must not be negative")
	}
	return *cfg.InitPool, nil
}

// startPool cleans what pooled entries of a dead process left and, with
// n > 0, starts filling a pool of n inits.
func (m *Manager) startPool(n int) error {
	dir := filepath.Join(m.cfg.StateDir, "pool")
	m.cleanPoolDir(dir)
	if n == 0 {
		return nil
	}
	if err := m.mnt.do(m.shareRunDir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("sandbox: pool dir: %w", err)
	}
	// Beside runDir, as the cgroup-lock mount point: not a sandbox's.
	stage := m.runDir + ".pool"
	if err := os.Mkdir(stage, 0o711); err != nil && !os.IsExist(err) {
		return fmt.Errorf("sandbox: pool dir: %w", err)
	}
	m.pool = &initPool{ready: make(chan *poolEntry, n), wake: make(chan struct{}, 1), dir: dir, stage: stage}
	m.wg.Add(1)
	go m.fillPool()
	return nil
}

// PoolReady reports how many pre-started inits are ready to be taken.
func (m *Manager) PoolReady() int {
	if m.pool == nil {
		return 0
	}
	return len(m.pool.ready)
}

// PoolTaken reports how many Creates were served by a pre-started init.
func (m *Manager) PoolTaken() int64 {
	if m.pool == nil {
		return 0
	}
	return m.pool.taken.Load()
}

// takePooled returns a ready entry, or nil when the pool is off or empty
// (the caller then starts an init itself: a create never waits for one).
// The caller calls refillPool once it is done.
func (m *Manager) takePooled() *poolEntry {
	if m.pool == nil {
		return nil
	}
	select {
	case e := <-m.pool.ready:
		m.pool.taken.Add(1)
		return e
	default:
		return nil
	}
}

// refillPool wakes the filler. Creates call it when they are done, not
// when they take an entry: a refill (a clone, an init's runtime start,
// cgroup moves) would otherwise compete with the create that took one.
func (m *Manager) refillPool() {
	m.pool.lastCreate.Store(time.Now().UnixNano())
	select {
	case m.pool.wake <- struct{}{}:
	default:
	}
}

// sameLimits reports whether the entry's cgroups have these limits
// already (cpu 0: the default), so that assignment need not write them.
func (e *poolEntry) sameLimits(cpu float64, mem, pids int64, defaultCPU float64) bool {
	if cpu == 0 {
		cpu = defaultCPU
	}
	return cpu == e.cpu && mem == e.mem && pids == e.pids
}

// fillPool keeps the pool full until the Manager closes.
func (m *Manager) fillPool() {
	defer m.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-m.stop
		cancel()
	}()
	for {
		for len(m.pool.ready) < cap(m.pool.ready) {
			if !m.awaitQuiet() {
				return
			}
			e, err := m.startPooled(ctx)
			if err != nil {
				// Creates fall back to starting their own init; try
				// again after the next take or a pause.
				if ctx.Err() == nil {
					m.pool.err.Store(&err)
				}
				break
			}
			select {
			case m.pool.ready <- e:
			case <-m.stop:
				m.discardPooled(e)
				return
			}
		}
		select {
		case <-m.stop:
			return
		case <-m.pool.wake:
		case <-time.After(5 * time.Second):
		}
	}
}

// refillQuiet is how long after the last Create the pool waits before it
// starts an init. Starting one clones this process, and the clone's copy
// of its page tables stalls every thread of it that faults meanwhile: the
// first commands a client runs right after its Create should not wait.
const refillQuiet = 5 * time.Millisecond

// refillQuietForked is refillQuiet when the fork-server clones the inits
// (no stall of this process). It is still not zero: a refill's init start
// and staging (CPU, mounts) would compete with the create it follows, and
// measured, starting it at the take made back-to-back creates slower even
// though nearly every one found a pooled init; 2 ms after a create kept
// 93-98 of 100 back-to-back creates pooled (5 ms: 81-91).
const refillQuietForked = 2 * time.Millisecond

// awaitQuiet waits until no Create finished for refillQuiet (or
// refillQuietForked); false if the
// Manager closes meanwhile.
func (m *Manager) awaitQuiet() bool {
	for {
		q := refillQuiet
		if m.forkServerOn() {
			q = refillQuietForked
		}
		d := time.Until(time.Unix(0, m.pool.lastCreate.Load()).Add(q))
		if d <= 0 {
			return true
		}
		select {
		case <-m.stop:
			return false
		case <-time.After(d):
		}
	}
}

// PoolError is the last error of starting a pooled init (nil if none or
// no pool): while it persists, Creates start their own inits.
func (m *Manager) PoolError() error {
	if m.pool == nil {
		return nil
	}
	if p := m.pool.err.Load(); p != nil {
		return *p
	}
	return nil
}

// startPooled starts one pooled init and waits until it is staged.
func (m *Manager) startPooled(ctx context.Context) (_ *poolEntry, err error) {
	id := newID()
	c := &m.cfg
	if err := m.cg.create(id, c.DefaultCPU, c.DefaultMemoryBytes, c.DefaultPids); err != nil {
		return nil, err
	}
	e := &poolEntry{id: id, logPath: filepath.Join(m.pool.dir, id+".log"),
		cpu: c.DefaultCPU, mem: c.DefaultMemoryBytes, pids: c.DefaultPids}
	defer func() {
		if err != nil {
			m.discardPooled(e)
		}
	}()
	if e.f, err = openInitFiles(e.sock(m), e.logPath); err != nil {
		return nil, err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("sandbox: init key: %w", err)
	}
	key := hex.EncodeToString(b[:])
	cfg := initConfig{Rootfs: m.runDir, Binds: m.binds, Key: key, Stage: m.pool.stage}
	cmd, err := m.initCmdFor(id, cfg, int(c.IDMapBase), e.f)
	if err != nil {
		return nil, err
	}
	e.p, err = m.spawnInit(cmd, int(c.IDMapBase), e.f, key)
	e.f.closeChildEnds()
	if err != nil {
		return nil, fmt.Errorf("sandbox: start pooled init: %w", err)
	}
	e.st = newInitStatus(ctx, e.f.statusR, e.logPath)
	if err := m.enterCgroups(id, e.p.pid, -1, e.st); err != nil {
		return nil, err
	}
	if _, err := e.st.next("pooled"); err != nil {
		return nil, err
	}
	return e, nil
}

// sock is the entry's control socket, the sandbox's once assigned.
func (e *poolEntry) sock(m *Manager) string { return filepath.Join(m.runDir, e.id+".sock") }

// discardPooled kills an entry's init and removes what it had.
func (m *Manager) discardPooled(e *poolEntry) {
	if e.p != nil {
		e.p.kill()
		if e.p.pidfd != nil {
			e.p.pidfd.Close()
		}
	}
	if e.st != nil {
		e.st.close()
	}
	if e.f != nil {
		e.f.close()
	}
	_ = m.cg.remove(e.id)
	os.Remove(e.sock(m))
	os.Remove(e.logPath)
}

// closePool kills the pooled inits (after the filler stopped).
func (m *Manager) closePool() {
	if m.pool == nil {
		return
	}
	defer os.Remove(m.pool.stage)
	for {
		select {
		case e := <-m.pool.ready:
			m.discardPooled(e)
		default:
			return
		}
	}
}

// cleanPoolDir removes what pooled entries of a process that died left:
// their inits exit by themselves once the pool's end of GoFd closes; their
// cgroups, sockets and logs (in dir) stay.
func (m *Manager) cleanPoolDir(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, ent := range ents {
		id := strings.TrimSuffix(ent.Name(), ".log")
		if !idRe.MatchString(id) {
			continue
		}
		if _, err := os.Stat(filepath.Join(m.sbDir, id)); err == nil {
			continue // assigned meanwhile: restore's to adopt
		}
		if m.cg.exists(id) {
			_ = m.cg.remove(id)
		}
		os.Remove(filepath.Join(m.runDir, id+".sock"))
		os.Remove(filepath.Join(dir, ent.Name()))
	}
	os.Remove(m.runDir + ".pool") // if empty; startPool makes it again
}
