package apply

import (
	"context"
	"strconv"
	"time"
)

// lockWait: the connection requester waits for a lock that blocker holds.
type lockWait struct{ requester, blocker uint64 }

// monitor polls the target's InnoDB lock waits. An applier outside the
// server cannot see the waits of its own connections any other way, and
// a wait of an earlier transaction on a later one would otherwise last
// until innodb_lock_wait_timeout: the later one is in-order blocked on
// the earlier one's commit.
type monitor struct {
	cancel context.CancelFunc
	done   chan struct{}
}

const lockWaitsSQL = `SELECT r.trx_mysql_thread_id, b.trx_mysql_thread_id
FROM information_schema.INNODB_LOCK_WAITS w
JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id
JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id`

func startMonitor(ctx context.Context, e *engine) *monitor {
	ctx, cancel := context.WithCancel(ctx)
	m := &monitor{cancel: cancel, done: make(chan struct{})}
	e.waitCh = make(chan []lockWait, 1)
	go func() {
		defer close(m.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			rows, err := e.tgt.DB.QueryContext(ctx, lockWaitsSQL)
			if err != nil {
				// MySQL 8 has no INNODB_LOCK_WAITS: fall back on the
				// lock wait timeout and retries.
				e.cfg.Log.Debug("lock wait monitor off", "err", err)
				return
			}
			var ws []lockWait
			for rows.Next() {
				var lw lockWait
				if rows.Scan(&lw.requester, &lw.blocker) == nil {
					ws = append(ws, lw)
				}
			}
			rows.Close()
			if len(ws) == 0 {
				continue
			}
			select {
			case e.waitCh <- ws:
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

func (e *engine) killQuery(connID uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := e.tgt.DB.ExecContext(ctx, "KILL QUERY "+strconv.FormatUint(connID, 10)); err != nil {
		e.cfg.Log.Warn("kill query of a yielding transaction failed", "conn", connID, "err", err)
	}
}
