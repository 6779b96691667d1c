// Package compact reduces a commit unit to its net effect per table.
//
// Inside a commit unit (consecutive source transactions committed as one
// target transaction) only the unit's end state is ever visible, so every
// change to one row collapses to the row's final image, and a table's
// changes become a few multi-row statements: delete the rows that are gone,
// insert the new ones, overwrite the changed ones. Per-statement parsing and
// execution were what one-row-at-a-time apply could not escape (DESIGN.md,
// "Commit order and the position").
//
// Compaction must not change meaning, so a table is compacted only when its
// row key alone decides which row a change touches and nothing else reacts
// to its rows:
//   - it has exactly one unique index (the primary key, or one unique key
//     over NOT NULL columns): an overwrite can then only meet its own row;
//   - no foreign key on it or to it, no triggers;
//   - every change carries full images and no relaxed-check flags.
//
// Other tables keep their changes in source order. The two groups never
// interact: a compacted table is neither parent nor child of another.
package compact

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/prepl/prepl/txn"
)

// Net is one table's net effect over a unit.
type Net struct {
	Def *txn.TableDef
	Map *txn.Table // the binlog's table map: column types of the images
	// Deletes are the before images of rows the unit removed (they existed
	// before it and do not after).
	Deletes [][]txn.Value
	// Inserts are the final images of rows that did not exist before.
	Inserts [][]txn.Value
	// Updates are the final images of rows that existed before and whose
	// image changed.
	Updates [][]txn.Value
}

// Step is a row change kept in source order, with its transaction (for
// messages).
type Step struct {
	Tx  *txn.Txn
	Row *txn.RowChange
}

// Plan is a unit reduced: ordered steps for tables that cannot be
// compacted, net effects for those that can.
type Plan struct {
	Ordered []Step
	Nets    []*Net
	// Dropped counts row changes that compaction made unnecessary.
	Dropped int
}

// Lookup returns a table's definition.
type Lookup func(schema, name string) (*txn.TableDef, error)

// rowState is one row key's history over the unit.
type rowState struct {
	existed bool        // the row existed before the unit
	before  []txn.Value // its image before the unit (when existed)
	final   []txn.Value // its image after; nil once deleted
}

type table struct {
	net   *Net
	keys  []int // row key columns
	rows  map[string]*rowState
	order []string // keys in first-touch order
	ok    bool
}

// Unit reduces txs (a unit's members, in order). ok is false when the unit
// holds statements, which only run in source order.
func Unit(txs []*txn.Txn, lookup Lookup) (p Plan, ok bool, err error) {
	tables := map[string]*table{} // by the binlog's schema.table
	var order []*table
	for _, tx := range txs {
		for _, ch := range tx.Changes {
			if ch.Stmt != nil {
				return Plan{}, false, nil
			}
		}
	}
	// First pass: which tables can be compacted.
	for _, tx := range txs {
		for _, ch := range tx.Changes {
			rc := ch.Row
			name := rc.Table.QualifiedName()
			t := tables[name]
			if t == nil {
				d, err := lookup(rc.Table.Schema, rc.Table.Name)
				if err != nil {
					return Plan{}, false, err
				}
				t = &table{net: &Net{Def: d, Map: rc.Table}, rows: map[string]*rowState{}}
				t.ok, t.keys = compactable(d)
				tables[name] = t
				order = append(order, t)
			}
			if t.ok && !fullImages(rc, t.net.Def) {
				t.ok = false
			}
		}
	}
	// Second pass: ordered steps, and row histories of compactable tables.
	for _, tx := range txs {
		for _, ch := range tx.Changes {
			rc := ch.Row
			t := tables[rc.Table.QualifiedName()]
			if !t.ok {
				p.Ordered = append(p.Ordered, Step{tx, rc})
				continue
			}
			if !t.apply(rc) {
				// The changes contradict each other (say, an insert of a row
				// the unit already holds): leave the whole unit to the
				// server, in order, where the error will name the row.
				return Plan{}, false, nil
			}
			p.Dropped++
		}
	}
	for _, t := range order {
		if !t.ok {
			continue
		}
		for _, k := range t.order {
			r := t.rows[k]
			switch {
			case r.existed && r.final == nil:
				t.net.Deletes = append(t.net.Deletes, r.before)
			case !r.existed && r.final != nil:
				t.net.Inserts = append(t.net.Inserts, r.final)
			case r.existed && !reflect.DeepEqual(r.before, r.final):
				t.net.Updates = append(t.net.Updates, r.final)
			default:
				continue // inserted then deleted, or back to its first image
			}
			p.Dropped--
		}
		p.Nets = append(p.Nets, t.net)
	}
	return p, true, nil
}

// compactable reports whether d qualifies, and its row key.
func compactable(d *txn.TableDef) (bool, []int) {
	k := d.RowKey()
	if k == nil || len(d.Indexes) != 1 || len(d.ForeignKeys) > 0 || d.Referenced || d.HasTriggers || !d.Transactional {
		return false, nil
	}
	return true, k.Columns
}

// fullImages: every writable column present, no relaxed checks.
func fullImages(rc *txn.RowChange, d *txn.TableDef) bool {
	if rc.Flags&(txn.RowsFlagNoForeignKeyChecks|txn.RowsFlagRelaxedUniqueCheck) != 0 {
		return false
	}
	for _, img := range [][]bool{rc.BeforeCols, rc.AfterCols} {
		for i, present := range img {
			if !present && i < len(d.Columns) && !d.Columns[i].Generated {
				return false
			}
		}
	}
	return true
}

// apply records one change; false when it contradicts the history.
func (t *table) apply(rc *txn.RowChange) bool {
	switch rc.Kind {
	case txn.Insert:
		return t.insert(rc.After)
	case txn.Delete:
		return t.delete(rc.Before)
	case txn.Update:
		if t.key(rc.Before) == t.key(rc.After) {
			k := t.key(rc.After)
			r := t.rows[k]
			if r == nil {
				t.touch(k, &rowState{existed: true, before: rc.Before, final: rc.After})
				return true
			}
			if r.final == nil {
				return false
			}
			r.final = rc.After
			return true
		}
		return t.delete(rc.Before) && t.insert(rc.After)
	}
	return false
}

func (t *table) insert(after []txn.Value) bool {
	k := t.key(after)
	r := t.rows[k]
	if r == nil {
		t.touch(k, &rowState{final: after})
		return true
	}
	if r.final != nil {
		return false
	}
	r.final = after
	return true
}

func (t *table) delete(before []txn.Value) bool {
	k := t.key(before)
	r := t.rows[k]
	if r == nil {
		t.touch(k, &rowState{existed: true, before: before})
		return true
	}
	if r.final == nil {
		return false
	}
	r.final = nil
	return true
}

func (t *table) touch(k string, r *rowState) {
	t.rows[k] = r
	t.order = append(t.order, k)
}

// key is the row key's values, exactly as the binlog carries them.
// Values that the server takes as equal (by collation) but that differ in
// bytes get different keys; that is safe because deletes are applied before
// inserts and overwrites (see the SQL side).
func (t *table) key(img []txn.Value) string {
	var b strings.Builder
	for _, c := range t.keys {
		b.WriteString(valueKey(img[c]))
		b.WriteByte(0)
	}
	return b.String()
}

func valueKey(v txn.Value) string {
	switch x := v.(type) {
	case nil:
		return "n"
	case []byte:
		return "b" + string(x)
	case int64:
		return "i" + strconv.FormatInt(x, 10)
	}
	return fmt.Sprintf("%T:%v", v, v)
}
