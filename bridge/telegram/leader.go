package telegram

import (
	"context"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen/store"
)

// Several server processes may share one PostgreSQL database
// (BULLPEN_SHARED_DATABASE=on). Telegram allows one poller per bot, and
// two relays or two outbox loops would queue and send replies twice, so
// the bridge's loops run only in the process holding a session advisory
// lock; the others stand by and take over when its session ends, however
// the process ended. Webhook updates may reach any replica: their effects
// and the update offset commit in one transaction, and a second delivery
// is refused there (store.ErrTelegramUpdateHandled).

// lockKey is the PostgreSQL session advisory lock whose holder runs the
// bridge's loops. Keys in use: 7410 the event writers (store/tx.go), 7412
// the agents' wake router (agents/replicas.go), 7413 this one.
const lockKey = 7413

// lockPoll is how often a standby tries the lock: the takeover delay
// after the leader's session ends.
const lockPoll = time.Second

// lockCheck is how often the leader checks that its lock's session is
// alive, so that a leader cut off from the database stops before a
// standby takes over.
const lockCheck = 2 * time.Second

// settingsPoll is how often a replica of a shared database looks for
// settings saved by another replica.
const settingsPoll = 2 * time.Second

// StateStandby: another process on the same database runs the bridge.
const StateStandby = "standby"

// lead runs the bridge's loops whenever this process holds the lock,
// until ctx ends.
func (b *Bridge) lead(ctx context.Context, cl *client) {
	for ctx.Err() == nil {
		lock := b.awaitLock(ctx)
		if lock == nil {
			return
		}
		b.leadWith(ctx, lock, cl)
		lock.Release()
		sleepReal(ctx, lockPoll) // the lock or the database failed: do not spin
	}
}

// leadWith runs the loops under lock until ctx ends or the lock is lost.
// When they stop on their own (a refused token), it keeps the lock until
// new settings restart the bridge, so that no standby retries the token.
func (b *Bridge) leadWith(ctx context.Context, lock *store.SessionLock, cl *client) {
	lctx, resign := context.WithCancel(ctx)
	defer resign()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() { defer wg.Done(); b.watchLock(lctx, lock, resign) }()
	st, err := b.takeOver(lctx)
	if err != nil {
		if lctx.Err() == nil {
			b.setError("cannot start: " + err.Error())
			b.log.Error("telegram: take over", "err", err)
		}
		return
	}
	b.run(lctx, cl, st, resign)
	<-lctx.Done()
}

// takeOver is the new leader's first step: rows the previous leader left
// mid-call become uncertain (never resent on their own), and the cursors
// are read fresh, since the previous leader moved them.
func (b *Bridge) takeOver(ctx context.Context) (store.TelegramBot, error) {
	var n int64
	_, err := b.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		n, err = tx.RecoverTelegram()
		return err
	})
	if err != nil {
		return store.TelegramBot{}, err
	}
	if n > 0 {
		b.log.Warn("telegram: outbox rows were mid-send when the last bridge stopped; marked uncertain, not resent", "rows", n)
	}
	return b.db.TelegramBot(ctx)
}

// awaitLock waits until this process holds the lock, standing by while
// another one does; nil when ctx ends first.
func (b *Bridge) awaitLock(ctx context.Context) *store.SessionLock {
	for first := true; ; first = false {
		lock, err := b.db.TryLock(ctx, lockKey)
		if lock != nil {
			return lock
		}
		if err != nil && ctx.Err() == nil {
			b.log.Warn("telegram: bridge lock", "err", err)
		}
		if first {
			b.standby()
		}
		if !sleepReal(ctx, lockPoll) {
			return nil
		}
	}
}

// standby shows that another process runs the bridge.
func (b *Bridge) standby() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state, b.lastErr = StateStandby, ""
	b.log.Info("telegram: another process runs the bridge on this database; standing by")
}

// watchLock calls lost when the lock's session ends.
func (b *Bridge) watchLock(ctx context.Context, lock *store.SessionLock, lost context.CancelFunc) {
	for sleepReal(ctx, lockCheck) {
		if !lock.Held(ctx) && ctx.Err() == nil {
			b.log.Warn("telegram: lost the bridge lock; standing by")
			lost()
			return
		}
	}
}

// followSettings restarts the bridge when another replica saves new
// settings (Configure restarts only the replica that served it).
func (b *Bridge) followSettings(ctx context.Context, st store.TelegramBot) {
	for sleepReal(ctx, settingsPoll) {
		cur, err := b.db.TelegramBot(ctx)
		if err != nil {
			continue
		}
		if cur.Token != st.Token || cur.Mode != st.Mode || cur.WebhookURL != st.WebhookURL || cur.WebhookSecret != st.WebhookSecret {
			b.log.Info("telegram: settings changed on another replica; restarting the bridge")
			go b.restart(context.Background()) // not in b.wg: restart waits for it
			return
		}
	}
}

// sleepReal waits d on the real clock (lock polling is about other
// processes, not the bridge's retry clock); false when ctx ended first.
func sleepReal(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
