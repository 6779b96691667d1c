package apply

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// monitor polls the target's lock waits. A wait of an earlier unit on a
// later one would otherwise last until the lock wait timeout: the later
// one is in-order blocked on the earlier one's commit.
type monitor struct {
	// busy: two units or more are on workers, so one may wait for
	// another's lock; the target is not asked otherwise.
	busy   atomic.Bool
	waits  chan []ConnWait
	off    chan struct{} // closed when the target cannot report lock waits
	cancel context.CancelFunc
	done   chan struct{}
}

// LockWaitEvery is how often the monitor asks the target. InnoDB answers
// INNODB_TRX and INNODB_LOCK_WAITS from a cache that it refreshes only
// when nobody has read it for 100 ms (so that a SELECT joining them reads
// one version): polled more often than that, it never refreshes, and the
// engine would act on waits long gone and miss the ones that stall it.
const LockWaitEvery = 200 * time.Millisecond

// headStallFallback: when the target cannot report lock waits, later
// prepared units yield once the next to commit has run this long (it may
// wait for their locks). With lock waits seen, nothing yields on a timer.
const headStallFallback = 3 * time.Second

func startMonitor(ctx context.Context, tgt Target, log *slog.Logger) *monitor {
	ctx, cancel := context.WithCancel(ctx)
	m := &monitor{waits: make(chan []ConnWait, 1), off: make(chan struct{}), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		t := time.NewTicker(LockWaitEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if !m.busy.Load() {
				continue
			}
			ws, err := tgt.LockWaits(ctx)
			if errors.Is(err, ErrNoLockWaits) {
				log.Debug("lock wait monitor off", "err", err)
				close(m.off) // the engine falls back on headStallFallback
				return
			}
			if err != nil {
				if ctx.Err() == nil {
					log.Debug("lock waits: this poll failed, the next may not", "err", err)
				}
				continue
			}
			if len(ws) == 0 {
				continue
			}
			select {
			case m.waits <- ws:
			case <-ctx.Done():
				return
			}
		}
	}()
	return m
}

func (m *monitor) stop() {
	m.cancel()
	<-m.done
}
