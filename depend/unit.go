package depend

import "github.com/prepl/prepl/txn"

// Commit units: consecutive source transactions applied on one target
// connection and committed as one target transaction (DESIGN.md, "Commit
// order and the position"). Inside a unit the transactions run one after
// the other, so the dependencies between them hold by construction; the
// tracker sees the unit as one transaction (Merge) whose dependencies on
// everything outside it are the union of its members'.

// CanJoin reports whether tx may be added to the unit that begins with
// first and ends with last. Barriers (DDL, XA, statements, non-transactional
// changes) are units of their own; a unit stays within one commit-order key
// (one schema or GTID domain in those modes) and, for the MySQL logical
// clock, within one binlog file.
func CanJoin(mode Mode, first, last, tx *txn.Txn) bool {
	if txBarrier(tx) != ReasonNone || txBarrier(last) != ReasonNone {
		return false
	}
	if tx.Start.File != first.Start.File {
		return false
	}
	if tx.SequenceNumber >= 0 && clockRestarts(last.SequenceNumber, last.Start.File, tx) {
		return false
	}
	switch mode {
	case Domain:
		return tx.Domain == first.Domain
	case Schema:
		k := OrderKey(mode, tx)
		return k != "" && k == OrderKey(mode, first)
	}
	return true
}

// Merge returns the transaction that stands for the unit txs (in stream
// order, built with CanJoin) in the tracker: the first member's Seq and
// start, the last one's end and GTID, every change, and source tags no
// more permissive than any member's:
//   - MariaDB commit id: kept when every member shares it, else 0, which
//     makes the unit wait for everything before it in commit-order mode.
//   - MySQL logical clock: the unit waits for what any member waits for
//     outside the unit; its sequence number is the first member's, so a
//     later transaction naming any member waits for the whole unit.
//   - GTID flags: the first member's, WAITED if any member waited, without
//     ALLOW_PARALLEL if any member lacks it.
//
// A unit of one transaction is that transaction itself.
func Merge(txs []*txn.Txn) *txn.Txn {
	if len(txs) == 1 {
		return txs[0]
	}
	first, last := txs[0], txs[len(txs)-1]
	u := *first
	u.End, u.GTID, u.SeqNo, u.ServerID, u.Timestamp = last.End, last.GTID, last.SeqNo, last.ServerID, last.Timestamp
	n := 0
	for _, t := range txs {
		n += len(t.Changes)
	}
	u.Changes = make([]txn.Change, 0, n)
	u.Size = 0
	for _, t := range txs {
		u.Changes = append(u.Changes, t.Changes...)
		u.Size += t.Size
		if t.CommitID != first.CommitID {
			u.CommitID = 0
		}
		if hasMariaDBFlags(t) {
			u.Flags |= t.Flags & txn.FlagWaited
			if t.Flags&txn.FlagAllowParallel == 0 {
				u.Flags &^= txn.FlagAllowParallel
			}
		}
		u.NonTransactional = u.NonTransactional || t.NonTransactional
	}
	u.KeysMemo = &unitMemo{members: txs, changes: firstChange(&u), n: len(u.Changes)}
	if first.SequenceNumber >= 0 && last.SequenceNumber >= 0 {
		// A member's last_committed at or past the unit's first sequence
		// number names members (run before it) and everything before the
		// unit; otherwise it names only transactions before the unit.
		lc := int64(-1)
		for _, t := range txs {
			lc = max(lc, min(t.LastCommitted, first.SequenceNumber-1))
		}
		u.LastCommitted = lc // the sequence number stays the first member's: naming any member names the unit
	}
	return &u
}
