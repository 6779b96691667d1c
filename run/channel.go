package run

import (
	"context"
	"log/slog"
	"maps"
	"sync/atomic"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/txn"
)

// channelLockWait is how long a run waits for the channel's lock: a prepl
// killed a moment ago may still hold it until the target notices.
const channelLockWait = 10 * time.Second

// channelRun is what a run holds on its channel besides its position: the
// channel's lock (prepl skip and prepl reset refuse while it is held) and
// the transactions `prepl skip` asked it to leave out.
type channelRun struct {
	unlock func() // lets the channel's lock go
	// claim is a MySQL target's: the lease and the epoch (nil on
	// PostgreSQL, whose lock is only the advisory lock).
	claim   *mysql.Claim
	role    *role
	skipped atomic.Uint64
	// requested are the transactions prepl skip asked to leave out, by
	// GTID or FILE:OFFSET, as the run started; read-only.
	requested map[string]bool
}

// requestedSkip reports whether prepl skip named the transaction: the
// binlog reader then drops one too big to hold (--max-txn-size) instead
// of refusing it.
func (cr *channelRun) requestedSkip(gtid string, start txn.Position) bool {
	return gtid != "" && cr.requested[gtid] || cr.requested[start.String()]
}

// claimChannel takes the channel's lock and installs the skip requests in
// cfg.Filter: a transaction named there is skipped (counted in the
// position, not applied) with a log line.
func claimChannel(ctx context.Context, log *slog.Logger, tgt Target, cfg *apply.Config, so standbyOptions) (*channelRun, error) {
	cr, err := lockChannel(ctx, log, tgt, so)
	if err != nil {
		return nil, err
	}
	release := cr.unlock
	skips, err := tgt.Skips(ctx)
	if err != nil {
		release()
		return nil, err
	}
	// A request already marked done stays in force: the mark is not
	// written in the transaction that stores the position past it, so
	// after a crash between the two the transaction comes again and must
	// be skipped again. Its GTID or start cannot come back otherwise
	// (prepl reset deletes the requests).
	want := map[string]bool{}    // requested, pending or done
	pending := map[string]bool{} // not yet marked done
	for _, s := range skips {
		want[s.Txn] = true
		if !s.Done {
			pending[s.Txn] = true
			log.Info("a transaction will be skipped (prepl skip)", "txn", s.Txn, "channel", tgt.ChannelName())
		}
	}
	if len(want) == 0 {
		return cr, nil
	}
	cr.requested = maps.Clone(want)
	inner := cfg.Filter
	cfg.Filter = func(t *txn.Txn) apply.Action {
		id := ""
		switch {
		case t.GTID != "" && want[t.GTID]:
			id = t.GTID
		case want[t.Start.String()]:
			id = t.Start.String()
		}
		if id == "" {
			if inner != nil {
				return inner(t)
			}
			return apply.Apply
		}
		delete(want, id)
		cr.skipped.Add(1)
		log.Warn("skipping a transaction as prepl skip asked: not applied, counted in the position", "txn", mysql.TxnID(t),
			"position", t.Start.String(), "channel", tgt.ChannelName())
		if pending[id] {
			mctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tgt.MarkSkipped(mctx, id); err != nil {
				log.Warn("could not mark the skip request done", "txn", id, "err", err)
			}
			mysql.CrashPoint("after-skip-mark", t)
		}
		return apply.Skip
	}
	return cr, nil
}

func (cr *channelRun) release() {
	if cr != nil {
		cr.unlock()
	}
}
