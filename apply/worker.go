package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/redact"
	"github.com/prepl/prepl/sequencer"
	"github.com/prepl/prepl/txn"
)

// errYield marks a transaction rolled back so that an earlier one can take
// its locks: the later transaction yields, as in MariaDB's replica.
var errYield = errors.New("yielded to an earlier transaction")

// ctlMsg tells a worker holding a prepared unit to commit it or roll it
// back. It names the unit: a message that arrives after its unit already
// ended must not touch the worker's next one.
type ctlMsg struct {
	seq   uint64
	abort bool
	pos   position.Checkpoint // with a commit turn: the checkpoint to store
}

// job is a Start action.
type job struct {
	unit       *sequencer.Unit
	ren        *rendering // its SQL, rendered ahead (nil for DDL)
	pos        position.Checkpoint
	before     position.Checkpoint // its slot's row before it, with the floor then
	commitNow  bool                // next to commit: no need to wait for a turn
	oldest     bool                // and nothing before it in any slot is left to commit
	ddl        bool
	resolveDDL string // the user's word on this DDL, if a crash interrupted it (--pending-ddl)
}

func (j *job) seq() uint64     { return j.unit.Seq() }
func (j *job) tx() *txn.Txn    { return j.unit.Txn }
func (j *job) txID() string    { return j.unit.Txn.ID() }
func (j *job) members() string { return j.unit.String() }

// worker applies one unit at a time on its pinned connection.
type worker struct {
	id   int
	sh   *shared
	conn Conn
	jobs chan job
	ctl  chan ctlMsg
	ctx  context.Context
	quit chan struct{}
	done chan struct{} // closed when loop has returned
	// connID is conn's id on the target, for the engine's lock-wait
	// mapping: conn itself belongs to the worker's goroutine.
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

// newWorker starts a worker; with open it connects now, else when it
// gets its first unit: --workers is a ceiling, and the units in flight
// may never need more than a few connections.
func newWorker(ctx context.Context, id int, sh *shared, open bool) (*worker, error) {
	w := &worker{id: id, sh: sh, jobs: make(chan job), ctl: make(chan ctlMsg, 64), ctx: ctx, quit: make(chan struct{}),
		done: make(chan struct{})}
	if open {
		if err := w.open(); err != nil {
			return nil, err
		}
	}
	w.setState("idle", "")
	go w.loop()
	return w, nil
}

func (w *worker) open() error {
	var c Conn
	err := w.sh.tgt.Retry(w.ctx, "open a worker connection", func() (err error) {
		c, err = w.sh.tgt.Conn(w.ctx)
		return err
	})
	if err != nil {
		return err
	}
	w.conn = c
	w.connID.Store(c.ID())
	return nil
}

func (w *worker) loop() {
	defer close(w.done)
	for {
		select {
		case j := <-w.jobs:
			w.setState("applying", j.txID())
			if w.conn == nil {
				if err := w.open(); err != nil {
					w.send(event{kind: evFailed, seq: j.seq(), err: fatalErr{err}})
					w.setState("idle", "")
					continue
				}
			}
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
	select {
	case w.sh.events <- ev:
	case <-w.ctx.Done():
	case <-w.quit:
	}
}

func (w *worker) run(j job) {
	t0 := time.Now()
	defer func() { w.busy.Add(int64(time.Since(t0))) }()
	log := w.sh.cfg.Log
	if j.ddl {
		ran, err := w.sh.tgt.ApplyDDL(w.ctx, j.tx(), j.before, j.pos, j.resolveDDL)
		if err != nil {
			w.fail(j, err)
			return
		}
		if ran {
			log.Info("DDL applied", "txn", j.txID(), "sql", redact.SQL(j.tx().Changes[0].Stmt.SQL))
		} else {
			log.Info("DDL not run again: it had taken effect before it was interrupted", "txn", j.txID(),
				"sql", redact.SQL(j.tx().Changes[0].Stmt.SQL), "decided_by", cmp.Or(j.resolveDDL, "catalog state"))
		}
		w.send(event{kind: evCommitted, seq: j.seq()})
		return
	}
	if appliesEach(w.sh.tgt) && w.runEach(j, &t0) {
		return
	}
	b, err := w.body(j)
	if err != nil {
		w.failUnit(j, err)
		return
	}
	if !j.commitNow && !w.waitTurn(&j, &t0) {
		return
	}
	w.setState("committing", j.txID())
	if err := w.conn.Commit(w.ctx, j.pos); err != nil {
		if w.sh.tgt.Classify(err) != Connection {
			w.fail(j, err)
			return
		}
		// Reconnected once, here: the commit may have happened.
		if rerr := w.reconnect(); rerr != nil {
			w.reconnectFailed(j, err, rerr)
			return
		}
		if w.committedBeforeCrash(j) {
			w.send(event{kind: evCommitted, seq: j.seq()})
			return
		}
		w.report(j, err)
		return
	}
	w.sh.counters.compacted.Add(uint64(b.Saved()))
	w.sh.counters.rowEvents.Add(uint64(b.RowEvents()))
	w.send(event{kind: evCommitted, seq: j.seq()})
}

// waitTurn reports j prepared and waits for its turn to commit, setting
// j.pos (j.commitNow stays as it was: the unit started ahead of its turn,
// which is what a failure's Speculative says); the wait is taken out of the busy time that
// starts at *t0. It reports false when the unit must not commit: told to
// yield (the unit failed with errYield), or the run stopping.
func (w *worker) waitTurn(j *job, t0 *time.Time) bool {
	w.setState("waiting-commit", j.txID())
	waitStart := time.Now()
	w.send(event{kind: evPrepared, seq: j.seq()})
	for {
		select {
		case m := <-w.ctl:
			if m.seq != j.seq() {
				continue // stale: meant for an earlier unit
			}
			if m.abort {
				w.fail(*j, errYield)
				return false
			}
			j.pos = m.pos
			*t0 = t0.Add(time.Since(waitStart)) // waiting for the turn is not busy time
			return true
		case <-w.ctx.Done():
			return false
		case <-w.quit:
			return false
		}
	}
}

// body applies the unit's rows inside a new target transaction and sends
// them, so that their row counts are checked before anything commits. A
// compacted statement that surprises makes it start over in source order.
func (w *worker) body(j job) (b Batch, err error) {
	b, err = w.sh.render.take(w.ctx, j.ren)
	if err != nil {
		return nil, err
	}
	err = w.conn.Send(w.ctx, b)
	if j.ren.compact && errors.Is(err, ErrCompacted) {
		w.sh.cfg.Log.Debug("compacted unit surprised the target: applying it in source order", "txn", j.txID(), "err", err)
		w.sh.counters.fallbacks.Add(1)
		if err := w.conn.Rollback(w.ctx); err != nil {
			return nil, err
		}
		if b, err = renderUnit(w.ctx, w.sh.tgt, j.ren.txs, false); err != nil {
			return nil, err
		}
		err = w.conn.Send(w.ctx, b)
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// failUnit reports a unit's failure. A server's refusal of a unit that
// was sent as the next to commit stops the run, and the error of a batch
// does not say which statement failed: the unit's prefixes are tried, each
// rolled back, to find the first member that fails, which the error then
// names (GTID, file:offset); the members before it are committed, so the
// run stops exactly before the failing transaction, as MariaDB's replica
// does. Otherwise the error names the unit's range.
func (w *worker) failUnit(j job, err error) {
	if w.sh.tgt.Classify(err) != Refused || errors.Is(err, ErrRowCount) {
		w.fail(j, err)
		return
	}
	txs := j.ren.txs
	first, last := txs[0], txs[len(txs)-1]
	if len(txs) == 1 {
		w.fail(j, fmt.Errorf("apply %s: %w", describe(first), err))
		return
	}
	if !j.commitNow {
		w.fail(j, fmt.Errorf("apply the commit unit from %s to %s: %w", describe(first), describe(last), err))
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
		w.fail(j, fmt.Errorf("apply the commit unit from %s to %s: %w", describe(first), describe(last), err))
		return
	}
	err = fmt.Errorf("apply %s: %w", describe(txs[lo]), err)
	prefix, perr := w.commitPrefix(j, txs[lo])
	if perr != nil {
		err = fmt.Errorf("%w (and committing the transactions before it failed: %v)", err, perr)
	}
	w.send(event{kind: evFailed, seq: j.seq(), err: fatalErr{err}, prefix: prefix})
}

// describe names a transaction for messages: its GTID and where it starts.
func describe(t *txn.Txn) string {
	if t.GTID != "" {
		return fmt.Sprintf("GTID %s (%s)", t.GTID, t.Start)
	}
	return "transaction at " + t.Start.String()
}

// tryPrefix applies txs in source order and rolls back.
func (w *worker) tryPrefix(txs []*txn.Txn) error {
	b, err := renderUnit(w.ctx, w.sh.tgt, txs, false)
	if err == nil {
		err = w.conn.Send(w.ctx, b)
	}
	w.conn.Rollback(w.ctx)
	return err
}

// commitPrefix commits the members of j's unit before failed, with the
// position after them: only when the unit is the oldest of all not yet
// committed (so the floor moves with it), and not when the target keeps
// GTIDs (one target transaction per source transaction).
func (w *worker) commitPrefix(j job, failed *txn.Txn) (*sequencer.Prefix, error) {
	if !j.oldest || w.sh.tgt.KeepsGTIDs() {
		return nil, nil
	}
	u := j.unit
	var members, apply []*txn.Txn
	for i, m := range u.Members {
		if m == failed {
			break
		}
		members = append(members, m)
		if !u.Skip[i] {
			apply = append(apply, m)
		}
	}
	if len(apply) == 0 {
		return nil, nil
	}
	p, err := sequencer.PrefixCheckpoint(j.before, j.pos.Slot, members)
	if err != nil {
		return nil, err
	}
	rows := 0
	for _, m := range members {
		rows += m.Rows()
	}
	b, err := renderUnit(w.ctx, w.sh.tgt, apply, false)
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
	return &sequencer.Prefix{Pos: p, Txns: len(apply), Rows: rows}, nil
}

// fail rolls back and reports; a broken connection is re-opened first.
func (w *worker) fail(j job, err error) {
	if w.sh.tgt.Classify(err) == Connection {
		if rerr := w.reconnect(); rerr != nil {
			w.reconnectFailed(j, err, rerr)
			return
		}
	} else {
		w.conn.Rollback(w.ctx)
	}
	w.report(j, err)
}

// report tells the engine that j's attempt failed with err and is over.
func (w *worker) report(j job, err error) {
	w.send(event{kind: evFailed, seq: j.seq(), err: err, speculative: !j.commitNow})
}

// reconnectFailed: j failed with err, a lost connection that could not be
// opened again (rerr): the run stops.
func (w *worker) reconnectFailed(j job, err, rerr error) {
	err = fmt.Errorf("%w (and reconnecting failed: %v)", err, rerr)
	w.send(event{kind: evFailed, seq: j.seq(), err: fatalErr{err}})
}

// fatalErr is never retried.
type fatalErr struct{ error }

func (f fatalErr) Unwrap() error { return f.error }

// reconnect replaces the connection, with backoff, for up to the
// configured time.
func (w *worker) reconnect() error {
	w.setState("reconnecting", "")
	w.sh.counters.reconnects.Add(1)
	w.conn.Close()
	deadline := time.Now().Add(w.sh.cfg.ReconnectTimeout)
	wait := 100 * time.Millisecond
	for {
		c, err := w.sh.tgt.Conn(w.ctx)
		if err == nil {
			w.conn = c
			w.connID.Store(c.ID())
			w.sh.cfg.Log.Warn("reconnected to target", "worker", w.id)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("target %s unreachable for %s: %w", w.sh.tgt, w.sh.cfg.ReconnectTimeout, err)
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
	ps, err := w.sh.tgt.Checkpoints(w.ctx)
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

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' || i > 120 {
			return s[:i]
		}
	}
	return s
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
		if w.conn != nil {
			w.conn.Close()
		}
	}
	e.workers = nil
	if e.render != nil {
		<-e.render.done
	}
}
