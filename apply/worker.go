package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/redact"
	"github.com/prepl/prepl/txn"
)

// ctlMsg tells a worker holding a prepared transaction to commit it or
// roll it back. It names the transaction: a message that arrives after
// its transaction already ended must not touch the worker's next one.
type ctlMsg struct {
	seq   uint64
	abort bool
	floor position.Floor // with a commit turn: the floor to store
}

type job struct {
	seq        uint64
	tx         *txn.Txn   // the unit as the tracker sees it
	ren        *rendering // its SQL, rendered ahead
	u          unit       // its members, skipped ones included
	pos        position.Checkpoint
	before     position.Checkpoint // its slot's row before it, with the floor then
	commitNow  bool                // the transaction is next to commit: no need to wait for a turn
	oldest     bool                // and nothing before it in any slot is left to commit
	ddl        bool
	resolveDDL string // the user's word on this DDL, if a crash interrupted it (--pending-ddl)
}

// worker applies one transaction at a time on its pinned connection.
type worker struct {
	id   int
	e    *engine
	conn *mysql.Conn
	jobs chan job
	ctl  chan ctlMsg
	ctx  context.Context
	quit chan struct{}
	done chan struct{} // closed when loop has returned
	// connID is conn's CONNECTION_ID(), for the engine's lock-wait
	// inspection: conn itself belongs to the worker's goroutine.
	connID atomic.Uint64

	// For Stats.Workers: written by the worker, read by snapshots.
	state   atomic.Value // string
	current atomic.Value // string: TxnID of the transaction in hand
	busy    atomic.Int64 // nanoseconds applying and committing
}

func (w *worker) setState(state, current string) {
	w.state.Store(state)
	w.current.Store(current)
}

func (w *worker) stat() WorkerStat {
	st, _ := w.state.Load().(string)
	cur, _ := w.current.Load().(string)
	return WorkerStat{ID: w.id, State: st, Txn: cur, Busy: time.Duration(w.busy.Load())}
}

func newWorker(ctx context.Context, id int, e *engine) (*worker, error) {
	var c *mysql.Conn
	err := e.tgt.Retry(ctx, "open a worker connection", func() (err error) {
		c, err = e.tgt.Conn(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	w := &worker{id: id, e: e, conn: c, jobs: make(chan job), ctl: make(chan ctlMsg, 64), ctx: ctx, quit: make(chan struct{}),
		done: make(chan struct{})}
	w.connID.Store(c.ID)
	w.setState("idle", "")
	go w.loop()
	return w, nil
}

func (w *worker) loop() {
	defer close(w.done)
	for {
		select {
		case j := <-w.jobs:
			w.setState("applying", mysql.TxnID(j.tx))
			w.run(j)
			w.setState("idle", "")
		case <-w.quit:
			return
		case <-w.ctx.Done():
			return
		}
	}
}

func (w *worker) send(ev event) {
	ev.w = w
	select {
	case w.e.events <- ev:
	case <-w.ctx.Done():
	case <-w.quit:
	}
}

func (w *worker) run(j job) {
	t0 := time.Now()
	defer func() { w.busy.Add(int64(time.Since(t0))) }()
	if j.ddl {
		ran, err := w.e.tgt.ApplyDDL(w.ctx, j.tx, j.before, j.pos, j.resolveDDL, w.e.cfg.KeepGTID)
		if err != nil {
			w.fail(j, err)
			return
		}
		if ran {
			w.e.cfg.Log.Info("DDL applied", "txn", mysql.TxnID(j.tx), "sql", firstLine(redact.SQL(j.tx.Changes[0].Stmt.SQL)))
		} else {
			w.e.cfg.Log.Info("DDL not run again: it had taken effect before it was interrupted", "txn", mysql.TxnID(j.tx),
				"sql", firstLine(redact.SQL(j.tx.Changes[0].Stmt.SQL)), "decided_by", cmp.Or(j.resolveDDL, "catalog state"))
		}
		w.send(event{kind: evCommitted, seq: j.seq})
		return
	}
	saved, err := w.body(j)
	if err != nil {
		w.failUnit(j, err)
		return
	}
	if !j.commitNow {
		w.setState("waiting-commit", mysql.TxnID(j.tx))
		waitStart := time.Now()
		w.send(event{kind: evPrepared, seq: j.seq})
	wait:
		for {
			select {
			case m := <-w.ctl:
				if m.seq != j.seq {
					continue // stale: meant for an earlier transaction
				}
				if m.abort {
					w.fail(j, errYield)
					return
				}
				j.pos.Floor = m.floor
				t0 = t0.Add(time.Since(waitStart)) // waiting for the turn is not busy time
				break wait
			case <-w.ctx.Done():
				return
			case <-w.quit:
				return
			}
		}
	}
	w.setState("committing", mysql.TxnID(j.tx))
	if err := w.conn.Commit(w.ctx, j.pos); err != nil {
		if mysql.Classify(err) == mysql.Connection && w.reconnect() == nil && w.committedBeforeCrash(j) {
			w.send(event{kind: evCommitted, seq: j.seq})
			return
		}
		w.fail(j, err)
		return
	}
	w.e.counters.compacted.Add(uint64(saved))
	w.send(event{kind: evCommitted, seq: j.seq})
}

// body applies the unit's rows inside a new target transaction and sends
// them, so that their row counts are checked before anything commits. A
// compacted statement that surprises makes it start over in source order.
func (w *worker) body(j job) (saved int, err error) {
	b, err := w.e.render.take(w.ctx, j.ren)
	if err != nil {
		return 0, err
	}
	err = w.conn.Send(w.ctx, b)
	if j.ren.compact && errors.Is(err, mysql.ErrCompacted) {
		w.e.cfg.Log.Debug("compacted unit surprised the target: applying it in source order", "txn", mysql.TxnID(j.tx), "err", err)
		w.e.counters.fallbacks.Add(1)
		if err := w.conn.Rollback(w.ctx); err != nil {
			return 0, err
		}
		if b, err = w.e.tgt.Render(w.ctx, j.ren.txs, false, w.e.cfg.KeepGTID); err != nil {
			return 0, err
		}
		err = w.conn.Send(w.ctx, b)
	}
	return b.Saved, err
}

// failUnit reports a unit's failure. A server's refusal of a unit that
// was sent as the next to commit stops the run, and the error of a batch
// does not say which statement failed: the unit's prefixes are tried, each
// rolled back, to find the first member that fails, which the error then
// names (GTID, file:offset); the members before it are committed, so the
// run stops exactly before the failing transaction, as MariaDB's replica
// does. Otherwise the error names the unit's range.
func (w *worker) failUnit(j job, err error) {
	if mysql.ErrorCode(err) == 0 || mysql.Classify(err) != mysql.Fatal || errors.Is(err, mysql.ErrRowCount) {
		w.fail(j, err)
		return
	}
	txs := j.ren.txs
	first, last := txs[0], txs[len(txs)-1]
	if len(txs) == 1 {
		w.fail(j, fmt.Errorf("apply %s: %w", mysql.Describe(first), err))
		return
	}
	if !j.commitNow {
		w.fail(j, fmt.Errorf("apply the commit unit from %s to %s: %w", mysql.Describe(first), mysql.Describe(last), err))
		return
	}
	w.conn.Rollback(w.ctx)
	lo, hi := 0, len(txs) // the first failing prefix is txs[:hi+1], if any
	for lo < hi {
		mid := (lo + hi) / 2
		if w.tryPrefix(txs[:mid+1]) != nil {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo == len(txs) {
		w.fail(j, fmt.Errorf("apply the commit unit from %s to %s: %w", mysql.Describe(first), mysql.Describe(last), err))
		return
	}
	err = fmt.Errorf("apply %s: %w", mysql.Describe(txs[lo]), err)
	prefix, perr := w.commitPrefix(j, txs[lo])
	if perr != nil {
		err = fmt.Errorf("%w (and committing the transactions before it failed: %v)", err, perr)
	}
	w.send(event{kind: evFailed, seq: j.seq, err: fatalErr{err}, prefix: prefix})
}

// tryPrefix applies txs in source order and rolls back.
func (w *worker) tryPrefix(txs []*txn.Txn) error {
	b, err := w.e.tgt.Render(w.ctx, txs, false, false)
	if err == nil {
		err = w.conn.Send(w.ctx, b)
	}
	w.conn.Rollback(w.ctx)
	return err
}

// commitPrefix commits the members of j's unit before failed, with the
// position after them: only when the unit is the oldest of all not yet
// committed (so the floor moves with it), and not with --keep-gtid (one
// target transaction per source transaction).
func (w *worker) commitPrefix(j job, failed *txn.Txn) (*prefixCommit, error) {
	if !j.oldest || w.e.cfg.KeepGTID {
		return nil, nil
	}
	var members, apply []*txn.Txn
	for i, m := range j.u.txs {
		if m == failed {
			break
		}
		members = append(members, m)
		if !j.u.skip[i] {
			apply = append(apply, m)
		}
	}
	if len(apply) == 0 {
		return nil, nil
	}
	slot, err := position.ParseSet(j.before.GTIDPos)
	if err != nil {
		return nil, err
	}
	floor, err := position.ParseSet(j.before.Floor.GTIDPos)
	if err != nil {
		return nil, err
	}
	rows := 0
	for _, m := range members {
		slot.Add(m)
		floor.Add(m)
		rows += m.Rows()
	}
	last := members[len(members)-1]
	p := position.Checkpoint{Slot: j.pos.Slot, GTIDPos: slot.String(), File: last.End.File, Pos: last.End.Offset,
		LastGTID: last.GTID, SourceTS: last.Timestamp, Applied: j.before.Applied + uint64(len(members)),
		Floor: position.Floor{GTIDPos: floor.String(), File: last.End.File, Pos: last.End.Offset}}
	b, err := w.e.tgt.Render(w.ctx, apply, false, false)
	if err == nil {
		err = w.conn.Send(w.ctx, b)
	}
	if err == nil {
		err = w.conn.Commit(w.ctx, p)
	}
	if err != nil {
		w.conn.Rollback(w.ctx)
		return nil, err
	}
	return &prefixCommit{pos: p, txns: len(apply), rows: rows}, nil
}

// fail rolls back and reports; a broken connection is re-opened first.
func (w *worker) fail(j job, err error) {
	if mysql.Classify(err) == mysql.Connection {
		if rerr := w.reconnect(); rerr != nil {
			err = fmt.Errorf("%w (and reconnecting failed: %v)", err, rerr)
			w.send(event{kind: evFailed, seq: j.seq, err: fatalErr{err}})
			return
		}
	} else {
		w.conn.Rollback(w.ctx)
	}
	w.send(event{kind: evFailed, seq: j.seq, err: err})
}

// fatalErr is never retried.
type fatalErr struct{ error }

func (f fatalErr) Unwrap() error { return f.error }

// reconnect replaces the connection, with backoff, for up to the
// configured time.
func (w *worker) reconnect() error {
	w.setState("reconnecting", "")
	w.e.counters.reconnects.Add(1)
	w.conn.Close()
	deadline := time.Now().Add(w.e.cfg.ReconnectTimeout)
	wait := 100 * time.Millisecond
	for {
		c, err := w.e.tgt.Conn(w.ctx)
		if err == nil {
			w.conn = c
			w.connID.Store(c.ID)
			w.e.cfg.Log.Warn("reconnected to target", "worker", w.id)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("target %s unreachable for %s: %w", w.e.tgt.Endpoint, w.e.cfg.ReconnectTimeout, err)
		}
		select {
		case <-time.After(wait):
		case <-w.ctx.Done():
			return w.ctx.Err()
		}
		if wait < 2*time.Second {
			wait *= 2
		}
	}
}

// committedBeforeCrash tells whether a commit whose answer was lost did
// happen: the position row is written in the same transaction.
func (w *worker) committedBeforeCrash(j job) bool {
	ps, err := w.e.tgt.Positions(w.ctx)
	if err != nil {
		return false
	}
	p := ps[j.pos.Slot]
	return p.Applied == j.pos.Applied && p.File == j.pos.File && p.Pos == j.pos.Pos
}

func (w *worker) abandon() {
	select {
	case <-w.quit:
	default:
		close(w.quit)
	}
}

// closeWorkers ends the workers and the renderer, cancelling what they
// are doing on the target, and waits until they have returned.
func (e *engine) closeWorkers() {
	e.stopWorkers()
	for _, w := range e.workers {
		w.abandon()
	}
	for _, w := range e.workers {
		<-w.done
		w.conn.Close()
	}
	e.workers = nil
	if e.render != nil {
		<-e.render.done
	}
}
