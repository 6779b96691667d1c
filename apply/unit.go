package apply

import (
	"time"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/txn"
)

// A unit is what one worker applies and commits as one target transaction:
// consecutive source transactions (depend.CanJoin decides which may share
// one). Transactions the filter skips ride along so the position moves
// past them in order.
type unit struct {
	txs  []*txn.Txn // members in stream order
	skip []bool     // per member: counted in the position, not applied
}

// applied returns the members to apply.
func (u *unit) applied() []*txn.Txn {
	out := make([]*txn.Txn, 0, len(u.txs))
	for i, t := range u.txs {
		if !u.skip[i] {
			out = append(out, t)
		}
	}
	return out
}

func (u *unit) last() *txn.Txn { return u.txs[len(u.txs)-1] }

// former builds units from the transactions read, in order. A unit grows
// while the workers are busy, up to maxTxns transactions and maxBytes; it
// is sealed when it is full, when the next transaction cannot join it, or
// when a worker would otherwise wait for work.
type former struct {
	mode              depend.Mode
	maxTxns, maxBytes int

	cur    unit
	bytes  int
	first  *txn.Txn // first applied member
	lastAp *txn.Txn // last applied member
	sealed bool
	since  time.Time // when the unit's first transaction was read
	// carry was read after the unit was sealed: it starts the next unit.
	carry     *txn.Txn
	carrySkip bool
}

func (f *former) empty() bool { return len(f.cur.txs) == 0 && f.carry == nil }

// full reports whether nothing more can be read until the unit is taken.
func (f *former) full() bool { return f.carry != nil }

// add appends tx (skip: only counted in the position); a transaction that
// cannot join seals the unit and waits in carry. Requires !full().
func (f *former) add(tx *txn.Txn, skip bool) {
	if f.sealed || !f.joins(tx, skip) {
		f.sealed = true
		f.carry, f.carrySkip = tx, skip
		return
	}
	if len(f.cur.txs) == 0 {
		f.since = time.Now()
	}
	f.cur.txs = append(f.cur.txs, tx)
	f.cur.skip = append(f.cur.skip, skip)
	f.bytes += tx.Size
	if !skip {
		if f.first == nil {
			f.first = tx
		}
		f.lastAp = tx
	}
	if len(f.cur.txs) >= f.maxTxns || f.bytes >= f.maxBytes {
		f.sealed = true
	}
}

func (f *former) joins(tx *txn.Txn, skip bool) bool {
	switch {
	case len(f.cur.txs) == 0:
		return true
	case f.bytes+tx.Size > f.maxBytes:
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

// take returns the sealed unit and starts the next one with carry.
func (f *former) take() unit {
	u := f.cur
	f.cur, f.bytes, f.first, f.lastAp, f.sealed = unit{}, 0, nil, nil, false
	if c := f.carry; c != nil {
		f.carry = nil
		f.add(c, f.carrySkip)
	}
	return u
}

// drop forgets everything not yet taken (a graceful stop).
func (f *former) drop() {
	f.cur, f.bytes, f.first, f.lastAp, f.sealed, f.carry = unit{}, 0, nil, nil, false, nil
}
