package sequencer

import (
	"time"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// A Unit is what one worker applies and commits as one target
// transaction: consecutive source transactions (depend.CanJoin decides
// which may share one). Transactions the filter skips ride along so the
// position moves past them in order.
type Unit struct {
	// Txn is the unit as the dependency tracker sees it (depend.Merge of
	// the applied members); Txn.Seq names the unit in events.
	Txn     *txn.Txn
	Members []*txn.Txn // in stream order
	Skip    []bool     // per member: counted in the position, not applied
	// Before is its slot's checkpoint before it; Pos its slot's checkpoint
	// once it commits. Their floors are set in the Start and Commit
	// actions, when they are known.
	Before, Pos position.Checkpoint
	Size        int // bytes of all members

	key        string         // commit-order key (depend.OrderKey)
	floorAfter position.Floor // gapless once it and all before it commit
	st         state
	worker     int // while running, prepared or committing
	retries    int
	aborted    bool      // asked to yield: its failure is a conflict
	lockWaited bool      // waited for an earlier unit's lock (the target said so)
	unseenWait time.Time // when it was first seen waiting for a holder not named, in this attempt
	reason     depend.Reason
	started    time.Time // when its current attempt started
	committed  bool
	nApplied   int
}

// Seq names the unit in events.
func (u *Unit) Seq() uint64 { return u.Txn.Seq }

// Applied returns the members to apply.
func (u *Unit) Applied() []*txn.Txn {
	out := make([]*txn.Txn, 0, len(u.Members))
	for i, t := range u.Members {
		if !u.Skip[i] {
			out = append(out, t)
		}
	}
	return out
}

// Last is the unit's last member.
func (u *Unit) Last() *txn.Txn { return u.Members[len(u.Members)-1] }

// Reason is why the unit waited before it could start (depend.ReasonNone:
// it did not).
func (u *Unit) Reason() depend.Reason { return u.reason }

// batch is a unit being formed: its members, nothing decided yet.
type batch struct {
	txs  []*txn.Txn
	skip []bool
}

// former builds units from the transactions read, in order. A unit grows
// while the workers are busy, up to maxTxns transactions, maxBytes and
// maxRows row changes (when not 0); it
// is sealed when it is full, when the next transaction cannot join it, or
// when a worker would otherwise wait for work.
type former struct {
	mode              depend.Mode
	maxTxns, maxBytes int
	maxRows           int // 0: no bound

	cur    batch
	bytes  int
	rows   int
	first  *txn.Txn // first applied member
	lastAp *txn.Txn // last applied member
	sealed bool
	since  time.Time // when the unit's first transaction was read
	// carry was read after the unit was sealed: it starts the next unit.
	carry     *txn.Txn
	carrySkip bool
	// What Sequencer.formingWaits found: the members before checked
	// would not wait for a unit in flight, and the unit waits while
	// waitOn (0: none found) is pending in the tracker.
	checked int
	waitOn  uint64
}

func (f *former) empty() bool { return len(f.cur.txs) == 0 && f.carry == nil }

// full reports whether nothing more can be read until the unit is taken.
func (f *former) full() bool { return f.carry != nil }

// add appends tx (skip: only counted in the position) read at now; a
// transaction that cannot join seals the unit and waits in carry.
// Requires !full().
func (f *former) add(tx *txn.Txn, skip bool, now time.Time) {
	if f.carry != nil {
		panic("sequencer: invariant broken: a transaction read while the former was full")
	}
	if f.sealed || !f.joins(tx, skip) {
		f.sealed = true
		f.carry, f.carrySkip = tx, skip
		return
	}
	if len(f.cur.txs) == 0 {
		f.since = now
	}
	f.cur.txs = append(f.cur.txs, tx)
	f.cur.skip = append(f.cur.skip, skip)
	f.bytes += tx.Size
	if f.maxRows > 0 {
		f.rows += tx.Rows()
	}
	if !skip {
		if f.first == nil {
			f.first = tx
		}
		f.lastAp = tx
	}
	if len(f.cur.txs) >= f.maxTxns || f.bytes >= f.maxBytes || f.maxRows > 0 && f.rows >= f.maxRows {
		f.sealed = true
	}
}

func (f *former) joins(tx *txn.Txn, skip bool) bool {
	switch {
	case len(f.cur.txs) == 0:
		return true
	case f.bytes+tx.Size > f.maxBytes, f.maxRows > 0 && f.rows+tx.Rows() > f.maxRows:
		return false
	case skip || f.first == nil:
		return true
	}
	return depend.CanJoin(f.mode, f.first, f.lastAp, tx)
}

// seal closes the unit being formed, if any.
func (f *former) seal() {
	if len(f.cur.txs) > 0 {
		f.sealed = true
	}
}

// ready reports whether a sealed unit waits to be taken.
func (f *former) ready() bool { return f.sealed && len(f.cur.txs) > 0 }

// take returns the sealed unit and starts the next one with carry, read
// at now.
func (f *former) take(now time.Time) batch {
	b := f.cur
	f.cur, f.bytes, f.rows, f.first, f.lastAp, f.sealed, f.checked, f.waitOn = batch{}, 0, 0, nil, nil, false, 0, 0
	if c := f.carry; c != nil {
		f.carry = nil
		f.add(c, f.carrySkip, now)
	}
	return b
}

// drop forgets everything not yet taken (a graceful stop).
func (f *former) drop() {
	f.cur, f.bytes, f.rows, f.first, f.lastAp, f.sealed, f.carry, f.checked, f.waitOn = batch{}, 0, 0, nil, nil, false, nil, 0, 0
}
