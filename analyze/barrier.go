package analyze

import (
	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/txn"
)

// barrierIn returns why tx is certainly a barrier in mode (every later
// transaction waits for it), or ReasonNone. It names the barriers depend's rules
// define (DESIGN.md "Dependency modes"; depend.Keys, Tracker.Add) only to
// let depStream retire them early; the dependencies themselves are always
// the tracker's. It must never name a barrier the tracker would not (that
// would add a dependency); missing one only blurs the wait statistics.
//
// Domain mode has no global barriers (a DDL holds back only its domain),
// so it names none there.
func barrierIn(mode depend.Mode, tx *txn.Txn, cat txn.Catalog) depend.Reason {
	if mode == depend.Domain {
		return depend.ReasonNone
	}
	for _, ch := range tx.Changes {
		if ch.Stmt != nil && ch.Stmt.DDL {
			return depend.ReasonDDL
		}
	}
	switch {
	case tx.XA:
		return depend.ReasonXA
	case tx.NonTransactional:
		return depend.ReasonNonTransactional
	}
	for _, ch := range tx.Changes {
		if ch.Stmt != nil {
			return depend.ReasonStatement
		}
	}
	switch mode {
	case depend.Serial:
		return depend.ReasonSerial
	case depend.CommitOrder:
		mysql := tx.CommitID == 0 && tx.LastCommitted >= 0 && tx.SequenceNumber >= 0
		if tx.CommitID == 0 && !mysql {
			return depend.ReasonCommitOrder // no tags: nothing says it may run with anything
		}
	case depend.Schema:
		if len(depend.Schemas(tx)) != 1 {
			return depend.ReasonSchema
		}
	case depend.Writeset:
		// Only a table the catalog flags can make it a barrier; depend.Keys
		// (the rule itself) confirms, in the rare case there is one.
		if flaggedTable(tx, cat) {
			_, why := depend.Keys(tx, cat)
			return why
		}
	case depend.Optimistic, depend.Aggressive:
		if cat != nil {
			return depend.OptimisticBarrier(tx, cat)
		}
	}
	return depend.ReasonNone
}

// flaggedTable reports whether tx changes a table that is unknown, a
// parent of a cascading foreign key, not transactional, or has triggers.
func flaggedTable(tx *txn.Txn, cat txn.Catalog) bool {
	var last *txn.Table
	for _, ch := range tx.Changes {
		if ch.Row == nil || ch.Row.Table == nil || ch.Row.Table == last {
			continue
		}
		last = ch.Row.Table
		if cat == nil {
			return true
		}
		def, ok := cat.Table(last.Schema, last.Name)
		if !ok || def == nil || len(def.Cascades) > 0 || !def.Transactional || def.HasTriggers {
			return true
		}
	}
	return false
}
