package apply

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
)

// errYield marks a transaction rolled back so that an earlier one can take
// its locks: the later transaction yields, as in MariaDB's replica.
var errYield = errors.New("yielded to an earlier transaction")

// isHead reports whether every earlier transaction with the same
// commit-order key has committed.
func (e *engine) isHead(en *entry) bool {
	q := e.orderQ[en.key]
	return len(q) > 0 && q[0] == en.tx.Seq
}

// dispatch moves what the tracker allows to idle workers and sends commit
// turns to the heads of the commit-order queues.
func (e *engine) dispatch() error {
	for _, s := range e.tracker.Ready() {
		en := e.entries[s.Seq]
		if en == nil {
			panic(fmt.Sprintf("apply: tracker released seq %d that was never admitted or already committed", s.Seq))
		}
		en.reason = s.Reason
		en.st = ready
		e.pushReady(s.Seq)
	}
	for key, q := range e.orderQ {
		if len(q) == 0 {
			delete(e.orderQ, key)
			continue
		}
		en := e.entries[q[0]]
		switch en.st {
		case retryWait:
			en.st = ready
			e.pushReady(en.tx.Seq)
		case prepared:
			en.st = committing
			en.w.ctl <- ctlMsg{seq: en.tx.Seq, floor: e.floorAt(en)}
		}
	}
	for len(e.idle) > 0 && len(e.readyQ) > 0 {
		seq := e.readyQ[0]
		en := e.entries[seq]
		// The last idle worker is kept for the next transaction to commit:
		// if later transactions took every worker, they would wait for its
		// commit while it waits for a worker.
		if len(e.idle) == 1 && !e.isHead(en) && e.headWaiting() {
			break
		}
		e.readyQ = e.readyQ[1:]
		w := e.idle[len(e.idle)-1]
		e.idle = e.idle[:len(e.idle)-1]
		en.w, en.st, en.aborted, en.started = w, running, false, time.Now()
		j := job{seq: seq, tx: en.tx, ren: en.ren, u: en.u, pos: en.pos, before: en.before, commitNow: e.isHead(en)}
		j.before.Floor = e.floor
		if j.commitNow {
			en.st = committing
			j.pos.Floor = e.floorAt(en)
			j.oldest = e.admittedQ[0] == en
		}
		if en.tx.IsDDL() {
			j.ddl = true
			if e.cfg.ResolveDDL.ID == mysql.TxnID(en.tx) {
				j.resolveDDL = e.cfg.ResolveDDL.As
			}
		}
		w.jobs <- j
	}
	return nil
}

// headWaiting reports whether a next transaction to commit has no worker.
func (e *engine) headWaiting() bool {
	for _, q := range e.orderQ {
		if len(q) == 0 {
			continue
		}
		if st := e.entries[q[0]].st; st == queued || st == ready || st == retryWait {
			return true
		}
	}
	return false
}

// floorAt is the floor to store with en's commit: its own end when
// everything before it has committed, else the gapless position so far.
func (e *engine) floorAt(en *entry) position.Floor {
	if len(e.admittedQ) > 0 && e.admittedQ[0] == en {
		return en.floorAfter
	}
	return e.floor
}

func (e *engine) pushReady(seq uint64) {
	i := sort.Search(len(e.readyQ), func(i int) bool { return e.readyQ[i] >= seq })
	e.readyQ = append(e.readyQ, 0)
	copy(e.readyQ[i+1:], e.readyQ[i:])
	e.readyQ[i] = seq
}

type evKind uint8

const (
	evPrepared evKind = iota
	evCommitted
	evFailed
)

type event struct {
	kind evKind
	seq  uint64
	w    *worker
	err  error
	// prefix, with a fatal evFailed: the members before the failing one
	// were committed, up to this position.
	prefix *prefixCommit
}

type prefixCommit struct {
	pos        position.Checkpoint
	txns, rows int
}

func (e *engine) handle(ev event) error {
	en := e.entries[ev.seq]
	if en == nil {
		panic(fmt.Sprintf("apply: event for unknown seq %d", ev.seq))
	}
	switch ev.kind {
	case evPrepared:
		if en.aborted {
			en.w.ctl <- ctlMsg{seq: en.tx.Seq, abort: true}
			return nil
		}
		en.st = prepared
	case evCommitted:
		e.committed(en)
	case evFailed:
		e.idle = append(e.idle, ev.w)
		en.w = nil
		if p := ev.prefix; p != nil {
			e.lastPos = p.pos
			e.counters.txns.Add(uint64(p.txns))
			e.counters.rows.Add(uint64(p.rows))
		}
		var fe fatalErr
		if errors.As(ev.err, &fe) {
			return fe.error
		}
		class := mysql.Classify(ev.err)
		// A failure is a conflict with speculative work, not counted
		// against --retries, unless the transaction was next to commit
		// and ran alone: a deadlock victim chosen among several running
		// units is not to blame.
		conflict := en.aborted || errors.Is(ev.err, errYield) || !e.isHead(en) ||
			class == mysql.Retry && e.othersInFlight(en)
		e.countError(class, conflict, ev.err)
		if !conflict {
			if class == mysql.Fatal {
				return ev.err
			}
			en.retries++
			if en.retries > e.cfg.Retries {
				return fmt.Errorf("%s: giving up after %d retries: %w", mysql.TxnID(en.tx), e.cfg.Retries, ev.err)
			}
		}
		e.counters.retries.Add(1)
		e.cfg.Log.Debug("retry", "txn", mysql.TxnID(en.tx), "conflict", conflict, "err", ev.err)
		en.st = retryWait
	}
	return nil
}

func (e *engine) committed(en *entry) {
	seq := en.tx.Seq
	q := e.orderQ[en.key]
	if len(q) == 0 || q[0] != seq {
		panic(fmt.Sprintf("apply: seq %d committed out of order (head of %q is %v)", seq, en.key, q))
	}
	e.orderQ[en.key] = q[1:]
	delete(e.entries, seq)
	e.tracker.Done(seq)
	e.idle = append(e.idle, en.w)
	e.inflight -= en.size
	en.committed = true
	for len(e.admittedQ) > 0 && e.admittedQ[0].committed {
		e.floor = e.admittedQ[0].floorAfter
		e.admittedQ = e.admittedQ[1:]
	}
	e.lastPos = position.Checkpoint{Slot: en.pos.Slot, GTIDPos: e.floor.GTIDPos, File: e.floor.File, Pos: e.floor.Pos,
		LastGTID: en.pos.LastGTID, SourceTS: en.pos.SourceTS}
	e.counters.txns.Add(uint64(en.nApplied))
	e.counters.rows.Add(uint64(en.tx.Rows()))
	e.counters.bytes.Add(uint64(en.tx.Size))
	if !en.tx.IsDDL() {
		e.stats.Units++
		e.stats.UnitHist[unitBucket(en.nApplied)]++
	} else {
		e.ddlHold = false
	}
}

// lockWaits resolves waits reported by the monitor: when an earlier
// transaction waits for a lock a later one holds, the later one yields.
func (e *engine) lockWaits(waits []lockWait) {
	byConn := map[uint64]*entry{}
	for _, en := range e.entries {
		if en.w != nil && (en.st == running || en.st == prepared || en.st == committing) {
			byConn[en.w.connID.Load()] = en
		}
	}
	for _, lw := range waits {
		req, blk := byConn[lw.requester], byConn[lw.blocker]
		if req == nil || blk == nil || blk.aborted || blk.tx.Seq < req.tx.Seq || blk.st == committing {
			continue
		}
		blk.aborted = true
		switch blk.st {
		case prepared:
			blk.w.ctl <- ctlMsg{seq: blk.tx.Seq, abort: true}
		case running:
			e.killQuery(blk.w.connID.Load())
		}
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

// headStallCheck and headStallAfter: when the next transaction to commit
// has been running this long while later ones hold their locks waiting for
// their turn, the later ones yield. Lock waits that InnoDB's information
// schema does not show (seen on MariaDB 10.11 for an INSERT waiting on a
// unique-index gap) are caught this way; the cost is a retry.
const (
	headStallCheck = 100 * time.Millisecond
	headStallAfter = 300 * time.Millisecond
)

func (e *engine) yieldToStalledHead() {
	for _, q := range e.orderQ {
		if len(q) == 0 {
			continue
		}
		head := e.entries[q[0]]
		if (head.st != running && head.st != committing) || time.Since(head.started) < headStallAfter {
			continue
		}
		for _, en := range e.entries {
			if en.tx.Seq > head.tx.Seq && en.st == prepared && !en.aborted {
				en.aborted = true
				en.w.ctl <- ctlMsg{seq: en.tx.Seq, abort: true}
			}
		}
	}
}

// countError counts a failed attempt by class for Stats.Errors.
func (e *engine) countError(class mysql.Class, conflict bool, err error) {
	name := "conflict"
	switch {
	case conflict:
	case class == mysql.Connection:
		name = "connection"
	case class == mysql.Fatal:
		name = "fatal"
	default:
		name = "retry"
	}
	if e.stats.Errors == nil {
		e.stats.Errors = map[string]uint64{}
	}
	e.stats.Errors[name]++
	if !errors.Is(err, errYield) {
		e.stats.LastError = err.Error()
	}
}

// othersInFlight reports whether a transaction other than en holds or may
// hold locks on the target.
func (e *engine) othersInFlight(en *entry) bool {
	for _, o := range e.entries {
		if o != en && (o.st == running || o.st == prepared || o.st == committing) {
			return true
		}
	}
	return false
}
