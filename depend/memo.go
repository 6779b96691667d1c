package depend

import (
	"slices"

	"github.com/prepl/prepl/txn"
)

// Keys are asked of the same transaction more than once: the sequencer
// asks a member's while its unit forms (WouldWait), then the unit's, the
// merge of its members (Add); analyze drives dozens of simulated
// sequencers over one stream. Computing them (hashing every key column of
// every image) was a third of analyze's CPU on a TPC-C-like binlog, and a
// unit's keys were its members' computed a second time.
//
// So a transaction keeps its keys (txn.Txn.KeysMemo) with what they were
// computed from: its changes (the slice itself: a copy of the Txn with
// other changes does not match), its XA and non-transactional flags, and
// every definition the catalog gave (each table's and each foreign key
// parent's, by pointer: a catalog reloads a definition as a new one). The
// memo is used only while the catalog gives the same definitions, so keys
// are what Keys would compute now, whatever changed in between (a DDL, a
// reconnect that emptied the catalog). A unit's keys are folded from its
// members' in stream order: keySet.add keeps the first appearance's order
// and upgrades a shared key to exclusive with the reason of its first
// exclusive use, exactly as computing over the concatenated changes does.
// A unit with a member that is a barrier is computed whole, as before.
//
// The memo lives as long as the transaction: the engine and analyze hold
// transactions only within their windows.

// memo is a transaction's computed keys and what they depend on.
type memo struct {
	changes *txn.Change // &Changes[0]; nil for no changes
	n       int
	xa, nt  bool
	defs    []memoDef
	locks   []Lock // clipped: a caller's append never writes into it
	why     Reason

	// units are the folds of units this transaction begins (analyze's
	// simulations form the same units, each with a Merge of its own).
	units []*fold
}

// fold is a unit's keys folded from its members', kept on the first
// member for any unit of the same members.
type fold struct {
	members []*txn.Txn
	defs    []memoDef
	locks   []Lock
}

type memoDef struct {
	schema, name string
	def          *txn.TableDef
	ok           bool
}

// unitMemo is what Merge leaves on a unit: its members, whose keys make
// the unit's; the unit's own memo once computed.
type unitMemo struct {
	members []*txn.Txn
	changes *txn.Change // the unit's &Changes[0] as Merge built them
	n       int
	own     *memo
}

func firstChange(tx *txn.Txn) *txn.Change {
	if len(tx.Changes) == 0 {
		return nil
	}
	return &tx.Changes[0]
}

// valid reports whether m was computed from tx as it is and from the
// definitions cat gives now.
func (m *memo) valid(tx *txn.Txn, cat txn.Catalog) bool {
	if m == nil || m.changes != firstChange(tx) || m.n != len(tx.Changes) || m.xa != tx.XA || m.nt != tx.NonTransactional {
		return false
	}
	for _, d := range m.defs {
		def, ok := cat.Table(d.schema, d.name)
		if def != d.def || ok != d.ok {
			return false
		}
	}
	return true
}

// recorder is a catalog that notes each definition it gives, once.
type recorder struct {
	cat  txn.Catalog
	defs []memoDef
}

func (r *recorder) Table(schema, name string) (*txn.TableDef, bool) {
	for _, d := range r.defs {
		if d.schema == schema && d.name == name {
			return d.def, d.ok
		}
	}
	def, ok := r.cat.Table(schema, name)
	r.defs = append(r.defs, memoDef{schema, name, def, ok})
	return def, ok
}

// memoKeys is Keys(tx, cat), from tx's memo when it is valid; it leaves
// a memo on tx. The locks returned are shared with the memo: read them,
// append to them (their capacity is their length), never write them.
func memoKeys(tx *txn.Txn, cat txn.Catalog) ([]Lock, Reason) {
	if cat == nil {
		return Keys(tx, cat)
	}
	um, _ := tx.KeysMemo.(*unitMemo)
	m, _ := tx.KeysMemo.(*memo)
	if um != nil {
		m = um.own
	}
	if m.valid(tx, cat) {
		return m.locks, m.why
	}
	rec := &recorder{cat: cat}
	var locks []Lock
	why := ReasonNone
	folded := false
	if um != nil && len(um.members) > 1 && um.changes == firstChange(tx) && um.n == len(tx.Changes) {
		if f := findFold(um.members, cat); f != nil {
			rec.defs, locks, folded = f.defs, f.locks, true
		} else if locks, folded = foldKeys(um.members, cat, rec); folded {
			m0 := um.members[0].KeysMemo.(*memo)
			m0.units = append(m0.units, &fold{members: um.members, defs: rec.defs, locks: slices.Clip(locks)})
		}
	}
	if !folded {
		rec.defs = rec.defs[:0]
		locks, why = Keys(tx, rec)
	}
	m = &memo{changes: firstChange(tx), n: len(tx.Changes), xa: tx.XA, nt: tx.NonTransactional,
		defs: rec.defs, locks: slices.Clip(locks), why: why}
	if um != nil {
		um.own = m
	} else {
		tx.KeysMemo = m
	}
	return m.locks, m.why
}

// findFold returns the fold kept for a unit of exactly these members, if
// the catalog still gives the definitions it was computed from.
func findFold(members []*txn.Txn, cat txn.Catalog) *fold {
	m0, _ := members[0].KeysMemo.(*memo)
	if m0 == nil || !m0.valid(members[0], cat) {
		return nil
	}
	for _, f := range m0.units {
		if !slices.Equal(f.members, members) {
			continue
		}
		ok := true
		for _, d := range f.defs {
			if def, found := cat.Table(d.schema, d.name); def != d.def || found != d.ok {
				ok = false
				break
			}
		}
		if ok {
			return f
		}
	}
	return nil
}

// foldKeys computes a unit's keys from its members' (their memos); ok is
// false when a member is a barrier (the unit is then computed whole). rec
// records, for the unit's memo, the definitions every member's keys were
// computed from.
func foldKeys(members []*txn.Txn, cat txn.Catalog, rec *recorder) (locks []Lock, ok bool) {
	n := 0
	for _, t := range members {
		l, why := memoKeys(t, cat)
		if why != ReasonNone {
			return nil, false
		}
		n += len(l)
	}
	ks := keySet{locks: make([]Lock, 0, min(n, 4096))}
	for _, t := range members {
		m, _ := t.KeysMemo.(*memo)
		if m == nil {
			return nil, false // a member that is itself a unit: not built by Merge
		}
		for _, d := range m.defs {
			rec.Table(d.schema, d.name)
		}
		for _, l := range m.locks {
			ks.add(l.Key, l.Shared, l.Reason)
		}
	}
	return ks.locks, true
}
