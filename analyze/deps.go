package analyze

import (
	"fmt"
	"sort"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/txn"
)

// depStream drives a depend.Tracker to learn, for every transaction (or
// commit unit) added, the latest earlier one it depends on: its
// last_committed in MySQL's sense, on prepl's own dependency rules.
//
// Items are numbered 1, 2, ... in the order added (idx). The tracker is
// kept holding the last `history` items; older ones are marked Done in
// order. Because Done goes in order, an item becomes ready exactly when the
// latest item it depends on is Done, so that item is its last_committed.
// An item ready as soon as it is added depends on nothing within the
// history: its last_committed is the last item Done, which caps its
// interval at about `history` (like MySQL's
// binlog_transaction_dependency_history_size).
//
// Since every commit is in source order, "the latest dependency has
// committed" is the same as "every dependency has committed": the one
// number is all the scheduler simulation needs.
//
// A barrier (an item everything after it waits for: a DDL, say) would stay
// in the history and be found first by everything added after it, so
// every wait for `history` items would be counted as a wait for it.
// Instead, everything pending is marked Done before a barrier is added
// (in order, so each released item still gets its exact latest
// dependency), and the barrier is marked Done as soon as it is added: it
// depends on everything before it, and everything after it depends on it
// through the cap, which is exact. Its own wait is counted under its
// barrier reason. The caller says which items are barriers (barrierIn); a
// barrier it does not flag is only counted less precisely, never
// scheduled wrongly.
//
// Memory: the tracker's state for `history` items and as many queued
// payloads.
type depStream[T any] struct {
	tr       *depend.Tracker
	history  int
	items    []depItem[T] // from the oldest not Done; items before emitted are emitted
	emitted  int          // items[:emitted] have been emitted
	lastDone uint64       // idx of the last item Done
	n        uint64       // items added
	emit     func(it *depItem[T])
	barriers map[depend.Reason]uint64
}

// depItem is one added item and, once known, its dependency.
type depItem[T any] struct {
	idx    uint64
	seq    uint64
	lc     uint64        // idx of the latest item it depends on; 0: none
	reason depend.Reason // why it waited (ReasonNone when it did not)
	known  bool
	eager  bool          // a barrier: Done as soon as released
	waited depend.Reason // a barrier that had something to wait for: its reason
	data   T
}

func newDepStream[T any](mode depend.Mode, cat txn.Catalog, history int, emit func(*depItem[T])) *depStream[T] {
	return &depStream[T]{tr: depend.New(mode, cat), history: max(history, 1), emit: emit, barriers: map[depend.Reason]uint64{}}
}

// add feeds the next item; tx.Seq must increase from call to call.
// barrier is the reason every later item waits for it, ReasonNone when
// it is not a barrier (see barrierIn).
func (d *depStream[T]) add(tx *txn.Txn, data T, barrier depend.Reason) {
	it := depItem[T]{seq: tx.Seq, data: data, eager: barrier != depend.ReasonNone}
	if barrier != depend.ReasonNone {
		if len(d.items) > 0 {
			d.barriers[barrier]++ // it waits for what is pending
			it.waited = barrier
		}
		d.finish()
	}
	d.n++
	it.idx = d.n
	d.items = append(d.items, it)
	d.tr.Add(tx)
	d.collect()
	for len(d.items) > d.history {
		d.doneOldest()
	}
	d.flush()
}

// finish marks everything Done and emits what remains.
func (d *depStream[T]) finish() {
	for len(d.items) > 0 {
		d.doneOldest()
		d.flush()
	}
}

// collect records the items the tracker lets start now: the latest
// dependency of each is the last item Done. A released barrier is the
// only pending item (see add): it is Done at once.
func (d *depStream[T]) collect() {
	for _, s := range d.tr.Ready() {
		i := sort.Search(len(d.items), func(i int) bool { return d.items[i].seq >= s.Seq })
		if i == len(d.items) || d.items[i].seq != s.Seq {
			panic(fmt.Sprintf("analyze: tracker released seq %d that is not pending", s.Seq))
		}
		it := &d.items[i]
		it.lc, it.reason, it.known = d.lastDone, s.Reason, true
		if it.waited != depend.ReasonNone {
			it.reason = it.waited
		}
	}
	if len(d.items) > 0 && d.items[0].known && d.items[0].eager {
		d.doneOldest()
	}
}

// doneOldest marks the oldest item Done. It has been released: every
// earlier item is Done, so nothing it depends on is pending.
func (d *depStream[T]) doneOldest() {
	it := &d.items[0]
	if !it.known {
		panic(fmt.Sprintf("analyze: item %d (seq %d) not released although every earlier one is Done", it.idx, it.seq))
	}
	d.flush()
	d.tr.Done(it.seq)
	d.lastDone = it.idx
	d.items = d.items[1:]
	d.emitted--
	if cap(d.items) > 4*d.history && len(d.items) < cap(d.items)/4 {
		d.items = append([]depItem[T](nil), d.items...)
	}
	d.collect()
}

// flush emits, in order, the items whose dependency is known.
func (d *depStream[T]) flush() {
	for d.emitted < len(d.items) && d.items[d.emitted].known {
		d.emit(&d.items[d.emitted])
		d.emitted++
	}
}

// stats are the wait counts by reason: the tracker's, and the barriers
// that had something to wait for.
func (d *depStream[T]) stats() map[depend.Reason]uint64 {
	st := d.tr.Stats()
	for r, n := range d.barriers {
		st[r] += n
	}
	return st
}
